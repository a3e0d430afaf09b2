import semver from 'semver';
import { isUniqueViolation } from '../../db/repositories/indexes.repository.js';
import type {
  RegistryMemberRow,
  RegistryProjectRow,
  RegistryRepository,
  RegistryVersionSummaryRow,
} from '../../db/repositories/registry.repository.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/time.js';
import { CanonicalJsonError, canonicalJson, digestOf, MAX_JSON_DEPTH } from './canonical-json.js';
import type { RegistryCaller } from './identity.js';

/** Registry project names (the `{project}` path segment). */
export const PROJECT_NAME = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';
const PROJECT_NAME_RE = new RegExp(PROJECT_NAME);
/** Longest username (owner, member) the registry stores. */
export const MAX_USERNAME_LENGTH = 255;
/** Longest version string (semver's own limit). */
export const MAX_VERSION_LENGTH = 256;

/** A published version as the API shows it (without its spec, which `pull` returns). */
export interface RegistryVersionView {
  id: string;
  project_id: string;
  owner: string;
  project: string;
  version: string;
  spec_digest: string;
  /** Deprecation does not change it: a deprecated version stays published and pullable. */
  status: 'published';
  release_notes: string;
  published_by: string;
  published_at: number;
  deprecated: boolean;
  deprecated_at: number | null;
  deprecation_reason: string | null;
}

/** A member with write access. */
export interface RegistryMemberView {
  name: string;
  access: 'write';
  added_by: string;
  added_at: number;
}

export interface PublishInput {
  version: string;
  spec: Record<string, unknown>;
  release_notes?: string;
}

/**
 * The registry of published project versions. A project comes into being at its first publish,
 * which only `{owner}` may make; the owner and the members the owner adds have write access
 * (publish, deprecate); any signed-in caller may read. Versions are immutable.
 */
export class Registry {
  constructor(private readonly repository: RegistryRepository) {}

  /** Publishes a version (creating the project at its owner's first publish); 409 when it exists. */
  async publish(caller: RegistryCaller, owner: string, name: string, input: PublishInput, now = Date.now()): Promise<RegistryVersionView> {
    checkNames(owner, name);
    const version = normalizeVersion(input.version, '/version');
    let canonical: string;
    try {
      canonical = canonicalJson(input.spec);
    } catch (err) {
      if (!(err instanceof CanonicalJsonError)) throw err;
      throw badRequest('invalid_spec', `The spec cannot be published: it ${err.message} (at most ${MAX_JSON_DEPTH}).`, [{ path: '/spec', message: err.message }]);
    }
    let project = await this.repository.findProject(owner, name);
    if (!project) {
      if (caller.username !== owner) {
        throw forbidden(`The first version of ${owner}/${name} must be published by ${owner}, who then owns it; you are signed in as ${caller.username}.`);
      }
      // Outside a transaction on purpose: a concurrent first publish by the owner may have made
      // the row, and a fresh read after the guarded insert sees it on MySQL as on SQLite.
      await this.repository.insertProjectIfMissing({ id: newId(), owner, name, created_at: now });
      project = (await this.repository.findProject(owner, name)) as RegistryProjectRow;
    } else {
      await this.requireWrite(caller, project, 'publish to');
    }
    const row = {
      id: newId(),
      project_id: project.id,
      version,
      spec: canonical,
      spec_digest: digestOf(canonical),
      release_notes: input.release_notes ?? '',
      published_by: caller.username,
      published_at: now,
      deprecated_at: null,
      deprecation_reason: null,
    };
    try {
      await this.repository.insertVersion(row);
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw conflict(`Version ${version} of ${owner}/${name} is already published, and published versions are immutable; publish a new version instead.`, 'version_exists');
      }
      throw err;
    }
    return view(project, row);
  }

  /** Versions in semver order, newest first. */
  async list(owner: string, name: string, limit: number, offset: number): Promise<RegistryVersionView[]> {
    const project = await this.project(owner, name);
    const rows = await this.repository.listVersions(project.id);
    rows.sort((a, b) => semver.rcompare(a.version, b.version));
    return rows.slice(offset, offset + limit).map((row) => view(project, row));
  }

  async get(owner: string, name: string, version: string): Promise<RegistryVersionView> {
    const project = await this.project(owner, name);
    return view(project, await this.version(project, version));
  }

  /** A version with its spec (deprecated versions too: deprecation is advice, not removal). */
  async pull(owner: string, name: string, version: string): Promise<{ version: RegistryVersionView; spec: Record<string, unknown> }> {
    const project = await this.project(owner, name);
    const normalized = normalizeVersion(version, '/version');
    const row = await this.repository.findVersionWithSpec(project.id, normalized);
    if (!row) throw this.noVersion(project, normalized);
    return { version: view(project, row), spec: JSON.parse(row.spec) as Record<string, unknown> };
  }

  /**
   * Marks a version deprecated; idempotent: a repeat keeps the first `deprecated_at`, a reason
   * replaces the stored one and no reason keeps it. The version stays published.
   */
  async deprecate(caller: RegistryCaller, owner: string, name: string, version: string, reason: string | null, now = Date.now()): Promise<RegistryVersionView> {
    const project = await this.project(owner, name);
    await this.requireWrite(caller, project, 'deprecate versions of');
    const normalized = normalizeVersion(version, '/version');
    if ((await this.repository.deprecate(project.id, normalized, now, reason)) === 0) throw this.noVersion(project, normalized);
    return view(project, await this.version(project, normalized));
  }

  /** Gives a user write access; `created` is false when they had it already. Owner only. */
  async addMember(caller: RegistryCaller, owner: string, name: string, member: string, now = Date.now()): Promise<{ member: RegistryMemberView; created: boolean }> {
    const project = await this.project(owner, name);
    this.requireOwner(caller, project);
    checkUsername(member, '/name', 'member name');
    if (member === project.owner) throw badRequest('owner_is_not_a_member', `${member} owns ${owner}/${name} and always has write access; members are other users.`);
    const row: RegistryMemberRow = { project_id: project.id, username: member, added_by: caller.username, created_at: now };
    try {
      await this.repository.insertMember(row);
      return { member: memberView(row), created: true };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await this.repository.member(project.id, member);
      return { member: memberView(existing ?? row), created: false };
    }
  }

  /** Takes a member's write access away. Owner only; 404 when they are not a member. */
  async removeMember(caller: RegistryCaller, owner: string, name: string, member: string): Promise<void> {
    const project = await this.project(owner, name);
    this.requireOwner(caller, project);
    if ((await this.repository.deleteMember(project.id, member)) === 0) throw notFound(`${member} is not a member of ${owner}/${name}.`);
  }

  /** The members with write access besides the owner, newest first. */
  async members(owner: string, name: string, limit: number, offset: number): Promise<RegistryMemberView[]> {
    const project = await this.project(owner, name);
    return (await this.repository.listMembers(project.id, limit, offset)).map(memberView);
  }

  private async project(owner: string, name: string): Promise<RegistryProjectRow> {
    checkNames(owner, name);
    const project = await this.repository.findProject(owner, name);
    if (!project) throw notFound(`There is no registry project ${owner}/${name}; it comes into being when ${owner} publishes its first version.`);
    return project;
  }

  private async version(project: RegistryProjectRow, version: string): Promise<RegistryVersionSummaryRow> {
    const normalized = normalizeVersion(version, '/version');
    const row = await this.repository.findVersion(project.id, normalized);
    if (!row) throw this.noVersion(project, normalized);
    return row;
  }

  private noVersion(project: RegistryProjectRow, version: string) {
    return notFound(`${project.owner}/${project.name} has no version ${version}.`);
  }

  private async requireWrite(caller: RegistryCaller, project: RegistryProjectRow, what: string): Promise<void> {
    if (caller.username === project.owner) return;
    if (await this.repository.member(project.id, caller.username)) return;
    throw forbidden(`${caller.username} may not ${what} ${project.owner}/${project.name}: that takes write access, which its owner ${project.owner} grants by adding members.`);
  }

  private requireOwner(caller: RegistryCaller, project: RegistryProjectRow): void {
    if (caller.username !== project.owner) {
      throw forbidden(`Only ${project.owner}, the owner of ${project.owner}/${project.name}, manages its members; you are signed in as ${caller.username}.`);
    }
  }
}

/** A version string as stored: semver's normal form (`v1.2.3` → `1.2.3`; build metadata dropped). */
export function normalizeVersion(version: string, path: string): string {
  const normalized = version.length <= MAX_VERSION_LENGTH ? semver.valid(version) : null;
  if (normalized === null) {
    throw badRequest('invalid_version', `"${version.slice(0, 80)}" is not a semantic version; use MAJOR.MINOR.PATCH with an optional pre-release, e.g. 1.2.0 or 2.0.0-beta.1.`, [
      { path, message: 'must be a semantic version' },
    ]);
  }
  return normalized;
}

function checkNames(owner: string, name: string): void {
  checkUsername(owner, '/owner', 'owner');
  if (!PROJECT_NAME_RE.test(name)) {
    throw badRequest('invalid_project_name', `Registry project names match ${PROJECT_NAME} (got "${name.slice(0, 120)}").`, [{ path: '/project', message: `must match ${PROJECT_NAME}` }]);
  }
}

function checkUsername(value: string, path: string, what: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (value.length === 0 || value.length > MAX_USERNAME_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    throw badRequest('invalid_name', `A registry ${what} is 1 to ${MAX_USERNAME_LENGTH} characters without control characters.`, [{ path, message: 'is not a valid username' }]);
  }
}

function view(project: RegistryProjectRow, row: RegistryVersionSummaryRow): RegistryVersionView {
  const deprecatedAt = row.deprecated_at === null ? null : Number(row.deprecated_at);
  return {
    id: row.id,
    project_id: project.id,
    owner: project.owner,
    project: project.name,
    version: row.version,
    spec_digest: row.spec_digest,
    status: 'published',
    release_notes: row.release_notes,
    published_by: row.published_by,
    published_at: Number(row.published_at),
    deprecated: deprecatedAt !== null,
    deprecated_at: deprecatedAt,
    deprecation_reason: row.deprecation_reason,
  };
}

const memberView = (row: RegistryMemberRow): RegistryMemberView => ({ name: row.username, access: 'write', added_by: row.added_by, added_at: Number(row.created_at) });
