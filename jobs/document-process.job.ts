import type { Knowledge } from '../core/knowledge/knowledge.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `document.process`: reads, chunks, embeds and indexes one document revision. */
export const documentProcessJob =
  (knowledge: Knowledge): JobHandler<'document.process'> =>
  (payload, ctx) =>
    knowledge.process(payload.projectId, payload.documentId, payload.revision, ctx);

/** `knowledge.purge`: removes the vectors of a deleted knowledge base or document. */
export const knowledgePurgeJob =
  (knowledge: Knowledge): JobHandler<'knowledge.purge'> =>
  (payload) =>
    knowledge.purge(payload.projectId, payload.embedModel, payload);
