import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { Middleware } from 'koa';
import { AppError, badRequest, payloadTooLarge } from '../../lib/errors.js';
import { assertSafeJson } from '../../lib/validation.js';

/** The file of a multipart upload. */
export interface UploadedFile {
  filename: string;
  mimeType: string;
  data: Buffer;
}

const LIMITS = { fields: 20, fieldSize: 64 * 1024, parts: 32 } as const;

const malformed = (why: string): AppError => badRequest('malformed_multipart', `The multipart body cannot be read: ${why}.`);

/**
 * Parses a `multipart/form-data` body with one file (field `file`) and text fields: the fields
 * go to `ctx.state.rawBody` (a field that holds JSON, such as `metadata`, is parsed when
 * `jsonFields` names it), the file to `ctx.state.upload`. A file over `maxBytes` is a 413; a
 * body cut off or malformed, a second file, a missing one, too many or too long fields, or a
 * field that is not valid JSON a 400. No parser or stream error escapes the request.
 */
export function multipartBody(maxBytes: number, jsonFields: readonly string[]): Middleware {
  return async (ctx, next) => {
    let parsed: { fields: Record<string, unknown>; upload: UploadedFile | null };
    try {
      parsed = await readMultipart(ctx.req, maxBytes, jsonFields);
    } catch (err) {
      // The rest of the body is not read: close the connection once the error is answered.
      ctx.set('Connection', 'close');
      throw err;
    }
    if (parsed.upload === null) {
      throw badRequest('validation_failed', 'The upload holds no file; send it in the form field "file".', [{ path: '/file', message: 'is required' }]);
    }
    ctx.state.rawBody = parsed.fields;
    ctx.state.upload = parsed.upload;
    return next();
  };
}

/**
 * Reads the whole form. Settles exactly once: on the parser's end, or on the first error of the
 * parser, the file stream or the request itself (a client hanging up mid-upload); every stream
 * involved has an `error` listener, so none can become an uncaught exception.
 */
function readMultipart(
  req: IncomingMessage,
  maxBytes: number,
  jsonFields: readonly string[],
): Promise<{ fields: Record<string, unknown>; upload: UploadedFile | null }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, unknown> = {};
    let upload: UploadedFile | null = null;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes, ...LIMITS } });
    } catch (err) {
      reject(malformed(err instanceof Error ? err.message.replace(/\.$/, '') : String(err)));
      return;
    }
    let settled = false;
    const cleanup = (): void => {
      req.off('aborted', onAborted);
      req.off('close', onClose);
      req.off('error', onRequestError);
    };
    const fail = (err: AppError): void => {
      if (settled) return;
      settled = true;
      cleanup();
      // Stop feeding the parser, without destroying it: this may run inside one of busboy's own
      // callbacks, which still touch its state afterwards. Later events need a listener only.
      req.unpipe(parser);
      parser.removeAllListeners('close');
      parser.on('error', () => undefined);
      req.resume();
      reject(err);
    };
    const onAborted = (): void => fail(malformed('the request was cut off'));
    const onRequestError = (): void => fail(malformed('the request was cut off'));
    // A connection closed before the whole body arrived: nothing more will come.
    const onClose = (): void => {
      if (!req.complete) fail(malformed('the request was cut off'));
    };
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.on('error', onRequestError);

    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (info.nameTruncated || info.valueTruncated) {
        fail(badRequest('validation_failed', `The form field "${name}" is over ${LIMITS.fieldSize} bytes.`, [{ path: `/${name}`, message: 'is too long' }]));
        return;
      }
      if (!jsonFields.includes(name)) {
        fields[name] = value;
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(value);
      } catch {
        fail(badRequest('validation_failed', `The form field "${name}" must hold JSON.`, [{ path: `/${name}`, message: 'must be JSON' }]));
        return;
      }
      try {
        assertSafeJson(json, `form field "${name}"`);
      } catch (err) {
        fail(err as AppError);
        return;
      }
      fields[name] = json;
    });
    parser.on('file', (name, stream, info) => {
      // A cut-off body errors the file stream too: without this listener that error is uncaught.
      stream.on('error', (err: Error) => fail(malformed(err.message.replace(/\.$/, ''))));
      if (settled || name !== 'file') {
        stream.resume();
        fail(badRequest('validation_failed', `Send the document in the form field "file" (got "${name}").`, [{ path: '/file', message: 'is required' }]));
        return;
      }
      const parts: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
      stream.on('limit', () => fail(payloadTooLarge(`The file is over the limit of ${maxBytes} bytes.`)));
      stream.on('end', () => {
        if (settled) return;
        upload = { filename: info.filename ?? '', mimeType: info.mimeType ?? 'application/octet-stream', data: Buffer.concat(parts) };
      });
    });
    parser.on('filesLimit', () => fail(badRequest('validation_failed', 'Send one file per request.', [{ path: '/file', message: 'one file only' }])));
    parser.on('fieldsLimit', () => fail(badRequest('validation_failed', `Send at most ${LIMITS.fields} form fields.`)));
    parser.on('partsLimit', () => fail(badRequest('validation_failed', `Send at most ${LIMITS.parts} form parts.`)));
    parser.on('error', (err: Error) => fail(malformed(err.message.replace(/\.$/, ''))));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve({ fields, upload });
    });
    req.pipe(parser);
  });
}
