import type { Knex } from 'knex';
import { supportsRowLocks } from '../knex.js';

/** A named record schema of a project; `latest_version` is the version reads default to. */
export interface SchemaRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  latest_version: number;
  created_at: number;
  updated_at: number;
}

/** One immutable version. `json_schema` and `retention` are JSON text; `embed_template` null means the default. */
export interface SchemaVersionRow {
  schema_id: string;
  project_id: string;
  version: number;
  json_schema: string;
  embed_template: string | null;
  retention: string | null;
  description: string | null;
  created_at: number;
}

/** A version joined with its schema's name. */
export type NamedVersionRow = SchemaVersionRow & { name: string };

/** The fields of a new version that the caller decides; the repository numbers it. */
export type NewVersion = Omit<SchemaVersionRow, 'schema_id' | 'project_id' | 'version'>;

const VERSION_COLUMNS = [
  'v.schema_id',
  'v.project_id',
  'v.version',
  'v.json_schema',
  'v.embed_template',
  'v.retention',
  'v.description',
  'v.created_at',
  's.name',
] as const;

/** Record schemas and their versions, every query scoped by project. */
export class SchemasRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Inserts a schema with its version 1 unless the project already has `maxSchemas`. The count
   * and the insert are atomic: the project row is locked (MySQL) or the transaction serialised
   * (SQLite's single connection), so concurrent registrations cannot overshoot the limit.
   * A taken name surfaces as the database's unique violation.
   */
  async insertIfRoom(schema: SchemaRow, first: NewVersion, maxSchemas: number): Promise<'inserted' | 'full'> {
    return this.db.transaction(async (trx) => {
      if (supportsRowLocks(this.db)) await trx('projects').where({ id: schema.project_id }).forUpdate().select('id');
      const [{ count }] = (await trx('record_schemas').where({ project_id: schema.project_id }).count({ count: '*' })) as [{ count: number | string }];
      if (Number(count) >= maxSchemas) return 'full';
      await trx('record_schemas').insert(schema);
      await trx('record_schema_versions').insert({ ...first, schema_id: schema.id, project_id: schema.project_id, version: 1 });
      return 'inserted';
    });
  }

  /**
   * Adds version N+1 of a schema, where N is its latest version. The schema row is locked for the
   * transaction (MySQL; SQLite serialises), so concurrent publishes get N+1 and N+2, never the
   * same number. `build` sees the previous latest version (for carry-over) and returns the new
   * one; it may throw to abort. Returns undefined when the schema does not exist.
   */
  async publish(projectId: string, name: string, build: (previous: NamedVersionRow) => NewVersion): Promise<NamedVersionRow | undefined> {
    return this.db.transaction(async (trx) => {
      let query = trx<SchemaRow>('record_schemas').where({ project_id: projectId, name });
      if (supportsRowLocks(this.db)) query = query.forUpdate();
      const schema = (await query.first()) as SchemaRow | undefined;
      if (!schema) return undefined;
      const previous = await this.versionQuery(trx, projectId)
        .where({ 'v.schema_id': schema.id, 'v.version': schema.latest_version })
        .first();
      const next = build(previous as NamedVersionRow);
      const row: SchemaVersionRow = { ...next, schema_id: schema.id, project_id: projectId, version: schema.latest_version + 1 };
      await trx('record_schema_versions').insert(row);
      await trx('record_schemas')
        .where({ project_id: projectId, id: schema.id })
        .update({ latest_version: row.version, description: row.description, updated_at: row.created_at });
      return { ...row, name: schema.name };
    });
  }

  /** A version by schema name; the latest when `version` is omitted. */
  async findByName(projectId: string, name: string, version?: number): Promise<NamedVersionRow | undefined> {
    const query = this.versionQuery(this.db, projectId).where('s.name', name);
    if (version === undefined) query.whereRaw('v.version = s.latest_version');
    else query.where('v.version', version);
    return (await query.first()) as NamedVersionRow | undefined;
  }

  /** A version by schema id (records pin the id and version they were written with). */
  async findById(projectId: string, schemaId: string, version: number): Promise<NamedVersionRow | undefined> {
    return (await this.versionQuery(this.db, projectId).where({ 'v.schema_id': schemaId, 'v.version': version }).first()) as
      | NamedVersionRow
      | undefined;
  }

  async exists(projectId: string, name: string): Promise<boolean> {
    return (await this.db('record_schemas').where({ project_id: projectId, name }).first('id')) !== undefined;
  }

  /** The latest version of each schema, schemas newest first. */
  async listLatest(projectId: string, limit: number, offset: number): Promise<NamedVersionRow[]> {
    return (await this.versionQuery(this.db, projectId)
      .whereRaw('v.version = s.latest_version')
      .orderBy([
        { column: 's.created_at', order: 'desc' },
        { column: 's.id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as NamedVersionRow[];
  }

  /** Schemas whose latest version has a retention policy (JSON text), of one project or of all. */
  async withRetention(projectId?: string): Promise<Array<{ project_id: string; schema_id: string; name: string; retention: string }>> {
    const query = this.db('record_schemas as s')
      .join('record_schema_versions as v', function () {
        this.on('v.schema_id', '=', 's.id').andOn('v.project_id', '=', 's.project_id').andOn('v.version', '=', 's.latest_version');
      })
      .whereNotNull('v.retention')
      .select('s.project_id', 's.id as schema_id', 's.name', 'v.retention')
      .orderBy([{ column: 's.project_id' }, { column: 's.id' }]);
    if (projectId !== undefined) query.where('s.project_id', projectId);
    return (await query) as Array<{ project_id: string; schema_id: string; name: string; retention: string }>;
  }

  /** Every version of one schema, newest first. */
  async listVersions(projectId: string, name: string, limit: number, offset: number): Promise<NamedVersionRow[]> {
    return (await this.versionQuery(this.db, projectId)
      .where('s.name', name)
      .orderBy('v.version', 'desc')
      .limit(limit)
      .offset(offset)) as NamedVersionRow[];
  }

  private versionQuery(db: Knex | Knex.Transaction, projectId: string): Knex.QueryBuilder {
    return db('record_schema_versions as v')
      .join('record_schemas as s', 's.id', 'v.schema_id')
      .where({ 's.project_id': projectId, 'v.project_id': projectId })
      .select(...VERSION_COLUMNS);
  }
}
