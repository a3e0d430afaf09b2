import { notFound } from '../lib/errors.js';

/**
 * The caller's project, when a request names one (a webhook path's project id, a body's mem0
 * `org_id` or `project_id`, which /v1/ping/ gives as the project's id); any other id is a project
 * this key cannot see: 404.
 */
export function ownProject(projectId: string, named: string): string {
  if (named !== projectId) throw notFound(`There is no project "${named}" for this key; /v1/ping/ gives its project_id.`, 'project_not_found');
  return projectId;
}
