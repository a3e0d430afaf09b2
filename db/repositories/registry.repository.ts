import type { Knex } from 'knex';

export interface RegistryProjectRow {
  id: string;
  owner: string;
  name: string;
  created_at: number;
}

export interface RegistryMemberRow {
  project_id: string;
  username: string;
  added_by: string;
  created_at: number;
}

export interface RegistryVersionRow {
  id: string;
  project_id: string;
  version: string;
  /** Canonical JSON of the spec: the text `spec_digest` is the hash of. */
  spec: string;
  spec_digest: string;
  release_notes: string;
  published_by: string;
  published_at: number;
  deprecated_at: number | null;
  deprecation_reason: string | null;
}

/** A version without its spec, as lists and views need it. */
export type RegistryVersionSummaryRow = Omit<RegistryVersionRow, 'spec'>;

const SUMMARY_COLUMNS = ['id', 'project_id', 'version', 'spec_digest', 'release_notes', 'published_by', 'published_at', 'deprecated_at', 'deprecation_reason'];

/** Registry projects, their members and their published versions. */
export class RegistryRepository {
  constructor(private readonly db: Knex) {}

  async findProject(owner: string, name: string): Promise<RegistryProjectRow | undefined> {
    return (await this.db('registry_projects').where({ owner, name }).first()) as RegistryProjectRow | undefined;
  }

  /** Inserts a project unless `{owner}/{name}` exists already (a concurrent first publish made it). */
  async insertProjectIfMissing(row: RegistryProjectRow): Promise<void> {
    await this.db('registry_projects').insert(row).onConflict(['owner', 'name']).ignore();
  }

  async member(projectId: string, username: string): Promise<RegistryMemberRow | undefined> {
    return (await this.db('registry_members').where({ project_id: projectId, username }).first()) as RegistryMemberRow | undefined;
  }

  /** Inserts a member; throws the driver's unique violation when they are one already. */
  async insertMember(row: RegistryMemberRow): Promise<void> {
    await this.db('registry_members').insert(row);
  }

  async deleteMember(projectId: string, username: string): Promise<number> {
    return this.db('registry_members').where({ project_id: projectId, username }).delete();
  }

  async listMembers(projectId: string, limit: number, offset: number): Promise<RegistryMemberRow[]> {
    return (await this.db('registry_members')
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'username', order: 'asc' },
      ])
      .limit(limit)
      .offset(offset)) as RegistryMemberRow[];
  }

  /** Inserts a version; throws the driver's unique violation when it is published already. */
  async insertVersion(row: RegistryVersionRow): Promise<void> {
    await this.db('registry_versions').insert(row);
  }

  async findVersion(projectId: string, version: string): Promise<RegistryVersionSummaryRow | undefined> {
    return (await this.db('registry_versions').where({ project_id: projectId, version }).first(SUMMARY_COLUMNS)) as RegistryVersionSummaryRow | undefined;
  }

  async findVersionWithSpec(projectId: string, version: string): Promise<RegistryVersionRow | undefined> {
    return (await this.db('registry_versions').where({ project_id: projectId, version }).first()) as RegistryVersionRow | undefined;
  }

  /** Every version of a project, unordered: semver order is not SQL order, so the caller sorts. */
  async listVersions(projectId: string): Promise<RegistryVersionSummaryRow[]> {
    return (await this.db('registry_versions').where({ project_id: projectId }).select(SUMMARY_COLUMNS)) as RegistryVersionSummaryRow[];
  }

  /**
   * Marks a version deprecated in one statement, so repeats and concurrent calls agree: the first
   * `deprecated_at` stays; a reason replaces the stored one, no reason keeps it.
   */
  async deprecate(projectId: string, version: string, now: number, reason: string | null): Promise<number> {
    return this.db('registry_versions')
      .where({ project_id: projectId, version })
      .update({
        deprecated_at: this.db.raw('COALESCE(deprecated_at, ?)', [now]),
        deprecation_reason: reason === null ? this.db.raw('deprecation_reason') : reason,
      });
  }
}
