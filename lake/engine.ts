import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeError, messageOf } from './errors.js';

/**
 * The lake's DuckDB: one in-memory database, locked down before anything else runs
 * (docs/architecture.md#the-context-lake). SQL can read no file except under the staging directory,
 * where the lake itself puts downloads while it loads them (the datasets' own data, deleted after
 * each load); it cannot write files, attach databases, install or load extensions, or change any
 * setting.
 */

export interface EngineOptions {
  /** AGENTRY_LAKE_DATA_DIR: staging/ (downloads) and spill/ (DuckDB's temporary files) live here. */
  dataDir: string;
  /** DuckDB syntax: `3GB`, `1536MiB`. */
  memoryLimit: string;
  threads: number;
  /** AGENTRY_LAKE_SPILL_LIMIT (max_temp_directory_size); undefined: DuckDB's default, 90% of the free disk. */
  spillLimit?: string | undefined;
}

/** Double quotes for an identifier (dataset and view names are checked, but never trust twice). */
export const identifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;
/** Single quotes for a string literal. */
export const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** Names with a `-` cannot be dataset names (SQL identifiers), so staging tables never clash. */
const stagingTable = (name: string): string => identifier(`agentry-staging-${name}`);

const noop = (): void => undefined;

export class LakeEngine {
  private readonly active = new Set<{ connection: DuckDBConnection; settled: Promise<void> }>();
  private closing = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    /** The lake's own connection: loads, swaps and views run here, one at a time. */
    private readonly admin: DuckDBConnection,
    readonly stagingDir: string,
  ) {}

  static async open(options: EngineOptions): Promise<LakeEngine> {
    const stagingDir = join(options.dataDir, 'staging');
    const spillDir = join(options.dataDir, 'spill');
    // Leftovers of a previous run are stale downloads and spill files: start empty.
    await rm(stagingDir, { recursive: true, force: true });
    await rm(spillDir, { recursive: true, force: true });
    await mkdir(stagingDir, { recursive: true, mode: 0o700 });
    await mkdir(spillDir, { recursive: true, mode: 0o700 });
    const instance = await DuckDBInstance.create(':memory:');
    let admin: DuckDBConnection | undefined;
    try {
      admin = await instance.connect();
      for (const statement of lockdownStatements(options, stagingDir, spillDir)) await admin.run(statement);
      return new LakeEngine(instance, admin, stagingDir);
    } catch (err) {
      admin?.closeSync();
      instance.closeSync();
      throw new Error(`cannot set up DuckDB: ${messageOf(err)}`, { cause: err });
    }
  }

  /**
   * Runs `work` on a connection of its own, closed after it (with its prepared statements and
   * results). close() interrupts and waits for these, so DuckDB never closes under a query.
   */
  async withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    this.throwIfClosing();
    const connection = await this.instance.connect();
    try {
      // close() may have begun while this one connected: it would neither interrupt nor wait for it.
      this.throwIfClosing();
      const running = work(connection);
      const entry = { connection, settled: running.then(noop, noop) };
      this.active.add(entry);
      try {
        return await running;
      } finally {
        this.active.delete(entry);
      }
    } finally {
      connection.closeSync();
    }
  }

  private throwIfClosing(): void {
    if (this.closing) throw new LakeError('not_loaded', 'The lake is stopping');
  }

  /**
   * Loads `select` into a staging table, then swaps it in for `name` in one transaction: queries
   * see the old rows until the commit and the new ones after. Returns the new row count. An
   * aborted signal interrupts the load.
   */
  async replaceTable(name: string, select: string, signal: AbortSignal): Promise<number> {
    const staging = stagingTable(name);
    const interrupt = (): void => {
      this.admin.interrupt();
    };
    signal.addEventListener('abort', interrupt, { once: true });
    try {
      await this.admin.run(`DROP TABLE IF EXISTS ${staging}`);
      await this.admin.run(`CREATE TABLE ${staging} AS ${select}`);
      signal.throwIfAborted();
      const counted = await this.admin.runAndReadAll(`SELECT count(*) FROM ${staging}`);
      const rowCount = Number(counted.getRows()[0]?.[0] ?? 0);
      await this.inTransaction([
        `DROP TABLE IF EXISTS ${identifier(name)}`,
        `ALTER TABLE ${staging} RENAME TO ${identifier(name)}`,
      ]);
      return rowCount;
    } finally {
      signal.removeEventListener('abort', interrupt);
      await this.admin.run(`DROP TABLE IF EXISTS ${staging}`).catch(() => undefined);
    }
  }

  async dropTable(name: string): Promise<void> {
    await this.admin.run(`DROP TABLE IF EXISTS ${identifier(name)}`);
  }

  /** Creates or replaces a view; DuckDB binds it now, so a missing table or a typo fails here. */
  async createView(name: string, sql: string): Promise<void> {
    await this.admin.run(`CREATE OR REPLACE VIEW ${identifier(name)} AS ${sql}`);
  }

  async dropView(name: string): Promise<void> {
    await this.admin.run(`DROP VIEW IF EXISTS ${identifier(name)}`);
  }

  /** Names of the views that exist now. */
  async viewNames(): Promise<string[]> {
    const reader = await this.admin.runAndReadAll(
      "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'",
    );
    return reader.getRows().map((row) => String(row[0]));
  }

  private async inTransaction(statements: string[]): Promise<void> {
    await this.admin.run('BEGIN TRANSACTION');
    try {
      for (const statement of statements) await this.admin.run(statement);
      await this.admin.run('COMMIT');
    } catch (err) {
      await this.admin.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Interrupts running queries, waits for them, then closes DuckDB. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const running = [...this.active];
    for (const entry of running) entry.connection.interrupt();
    await Promise.all(running.map((entry) => entry.settled));
    this.admin.closeSync();
    this.instance.closeSync();
  }
}

/**
 * The settings, in order; lock_configuration last, after which no connection can change any.
 * allowed_directories keeps the staging directory readable for the lake's later loads once
 * enable_external_access is off (verified with DuckDB 1.5: everything else, /etc/passwd,
 * COPY TO, ATTACH, INSTALL and LOAD, fails with a Permission Error).
 */
function lockdownStatements(options: EngineOptions, stagingDir: string, spillDir: string): string[] {
  return [
    `SET memory_limit = ${literal(options.memoryLimit)}`,
    `SET threads = ${options.threads}`,
    `SET temp_directory = ${literal(spillDir)}`,
    ...(options.spillLimit === undefined
      ? []
      : [`SET max_temp_directory_size = ${literal(options.spillLimit)}`]),
    `SET allowed_directories = [${literal(`${stagingDir}/`)}]`,
    'SET autoinstall_known_extensions = false',
    'SET autoload_known_extensions = false',
    'SET allow_community_extensions = false',
    'SET allow_unsigned_extensions = false',
    'SET allow_persistent_secrets = false',
    'SET enable_external_access = false',
    'SET lock_configuration = true',
  ];
}
