import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeError, messageOf } from './errors.js';

/**
 * The lake's DuckDB: one database file on the lake's own disk (`<data dir>/lake.duckdb`, kept
 * across restarts: docs/adr/0010-durable-incremental-lake.md), locked down before anything else
 * runs (docs/architecture.md#the-context-lake). SQL can read no file except under the staging
 * directory, where the lake itself puts downloads while it loads them (the datasets' own data,
 * deleted after each load); it cannot write files, attach databases, install or load extensions,
 * or change any setting. One exception is DuckDB's own: with a database file, it lets SQL read
 * that file and its WAL (what the tables hold anyway) and create the WAL when none exists; the
 * server runs only reading statements (lake/sql.ts), so no COPY reaches it.
 */

export interface EngineOptions {
  /** AGENTRY_LAKE_DATA_DIR: lake.duckdb, staging/ (downloads) and spill/ (DuckDB's temporary files) live here. */
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

/** The database file below AGENTRY_LAKE_DATA_DIR. */
export const DATABASE_FILE = 'lake.duckdb';

/** A view the lake made for a dataset carries this comment; views without it are the config's own. */
export const DATASET_VIEW_COMMENT = 'agentry:dataset';

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
    const instance = await DuckDBInstance.create(join(options.dataDir, DATABASE_FILE));
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

  /** Runs statements of the lake's own (loads, catalog) one after the other; an aborted signal interrupts them. */
  async run(statements: string | readonly string[], signal?: AbortSignal): Promise<void> {
    await this.interruptible(signal, async () => {
      for (const statement of typeof statements === 'string' ? [statements] : statements) {
        signal?.throwIfAborted();
        await this.admin.run(statement);
      }
    });
  }

  /** The rows of one of the lake's own queries as objects of JSON values (BIGINTs as strings), to parse. */
  async rows(sql: string): Promise<unknown[]> {
    const reader = await this.admin.runAndReadAll(sql);
    return reader.getRowObjectsJson();
  }

  /**
   * Runs statements as one transaction: queries see every change at the commit or none (a crash
   * before it leaves the file as it was).
   */
  async transaction(statements: readonly string[], signal?: AbortSignal): Promise<void> {
    await this.interruptible(signal, async () => {
      await this.admin.run('BEGIN TRANSACTION');
      try {
        for (const statement of statements) await this.admin.run(statement);
        signal?.throwIfAborted();
        await this.admin.run('COMMIT');
      } catch (err) {
        await this.admin.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  private async interruptible<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    if (signal === undefined) return work();
    signal.throwIfAborted();
    const interrupt = (): void => {
      this.admin.interrupt();
    };
    signal.addEventListener('abort', interrupt, { once: true });
    try {
      return await work();
    } finally {
      signal.removeEventListener('abort', interrupt);
    }
  }

  /** Creates or replaces a view; DuckDB binds it now, so a missing table or a typo fails here. */
  async createView(name: string, sql: string): Promise<void> {
    await this.admin.run(`CREATE OR REPLACE VIEW ${identifier(name)} AS ${sql}`);
  }

  async dropView(name: string): Promise<void> {
    await this.admin.run(`DROP VIEW IF EXISTS ${identifier(name)}`);
  }

  /** Names of the config's views that exist now (not the views the lake made for datasets). */
  async viewNames(): Promise<string[]> {
    const reader = await this.admin.runAndReadAll(
      `SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'
         AND comment IS DISTINCT FROM ${literal(DATASET_VIEW_COMMENT)}`,
    );
    return reader.getRows().map((row) => String(row[0]));
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
