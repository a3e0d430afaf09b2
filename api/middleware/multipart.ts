import busboy from 'busboy';
import type { Middleware } from 'koa';
import { badRequest, payloadTooLarge } from '../../lib/errors.js';

/** The file of a multipart upload. */
export interface UploadedFile {
  filename: string;
  mimeType: string;
  data: Buffer;
}

/**
 * Parses a `multipart/form-data` body with one file (field `file`) and text fields: the fields
 * go to `ctx.state.rawBody` (a field that holds JSON, such as `metadata`, is parsed when
 * `jsonFields` names it), the file to `ctx.state.upload`. A file over `maxBytes` is a 413, a
 * second file, a missing one or a field that is not valid JSON a 400.
 */
export function multipartBody(maxBytes: number, jsonFields: readonly string[]): Middleware {
  return async (ctx, next) => {
    const fields: Record<string, unknown> = {};
    let upload: UploadedFile | null = null;
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: ctx.req.headers, limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: 64 * 1024 } });
      } catch (err) {
        reject(badRequest('malformed_multipart', `The multipart body cannot be read: ${err instanceof Error ? err.message : String(err)}.`));
        return;
      }
      let failed = false;
      const fail = (err: Error): void => {
        if (failed) return;
        failed = true;
        ctx.req.unpipe(parser);
        ctx.req.resume();
        reject(err);
      };
      parser.on('field', (name, value) => {
        if (!jsonFields.includes(name)) {
          fields[name] = value;
          return;
        }
        try {
          fields[name] = JSON.parse(value);
        } catch {
          fail(badRequest('validation_failed', `The form field "${name}" must hold JSON.`, [{ path: `/${name}`, message: 'must be JSON' }]));
        }
      });
      parser.on('file', (name, stream, info) => {
        if (name !== 'file') {
          stream.resume();
          fail(badRequest('validation_failed', `Send the document in the form field "file" (got "${name}").`, [{ path: '/file', message: 'is required' }]));
          return;
        }
        const parts: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => parts.push(chunk));
        stream.on('limit', () => fail(payloadTooLarge(`The file is over the limit of ${maxBytes} bytes.`)));
        stream.on('end', () => {
          upload = { filename: info.filename ?? '', mimeType: info.mimeType ?? 'application/octet-stream', data: Buffer.concat(parts) };
        });
      });
      parser.on('filesLimit', () => fail(badRequest('validation_failed', 'Send one file per request.', [{ path: '/file', message: 'one file only' }])));
      parser.on('error', (err: Error) => fail(badRequest('malformed_multipart', `The multipart body cannot be read: ${err.message}.`)));
      parser.on('close', () => {
        if (!failed) resolve();
      });
      ctx.req.pipe(parser);
    });
    if (upload === null) throw badRequest('validation_failed', 'The upload holds no file; send it in the form field "file".', [{ path: '/file', message: 'is required' }]);
    ctx.state.rawBody = fields;
    ctx.state.upload = upload;
    return next();
  };
}
