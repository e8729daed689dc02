import { z } from 'zod';
import { DatasetSchema, ViewSchema } from '../../crds/context-lake/types.js';
import type { Dataset, View } from '../../crds/context-lake/types.js';
import { LAKE_CLIENT_ENV } from '../../platform/lake-client-env.js';
import { SqlResultSchema } from '../../platform/lake-protocol.js';
import type { ObjectRef, SqlResult } from '../../platform/lake-protocol.js';

/**
 * The organization's context lake as a workspace reaches it: the API server's /v1/context-lake
 * routes with the prompt's token (docs/lake-client.md). Never the lake server itself.
 */

export const LAKE_URL_VARIABLE = LAKE_CLIENT_ENV.url;
export const LAKE_TOKEN_VARIABLE = LAKE_CLIENT_ENV.token;

/** A failure to show the user as is: what went wrong and, where it helps, what to do. */
export class LakeClientError extends Error {
  override name = 'LakeClientError';
}

export interface LakeApiSettings {
  /** `<API server>/v1/context-lake`. */
  url: string;
  token: string;
}

/** The settings from the environment, or a LakeClientError saying which variable is missing. */
export function lakeApiSettingsOf(env: NodeJS.ProcessEnv): LakeApiSettings {
  const url = env[LAKE_URL_VARIABLE]?.trim() ?? '';
  const token = env[LAKE_TOKEN_VARIABLE]?.trim() ?? '';
  const missing = [url === '' ? LAKE_URL_VARIABLE : '', token === '' ? LAKE_TOKEN_VARIABLE : ''].filter(
    (name) => name !== '',
  );
  if (missing.length > 0)
    throw new LakeClientError(
      `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set: the lake client works in an Agentry workspace, where each prompt gets them (the organization's lake, read-only)`,
    );
  if (!URL.canParse(url)) throw new LakeClientError(`${LAKE_URL_VARIABLE} is not a URL`);
  return { url: url.replace(/\/+$/, ''), token };
}

/** The lake routes' error shape (docs/api.md#errors): `{ error, code }`. */
const LakeErrorBodySchema = z.object({ error: z.string(), code: z.string() });
const DatasetListSchema = z.object({ datasets: z.array(DatasetSchema) });
const ViewListSchema = z.object({ views: z.array(ViewSchema) });

/** What a query may add to its SQL: objects to wait for (docs/adr/0010) and that wait's bound. */
export interface QueryOptions {
  waitFor?: readonly ObjectRef[];
  waitTimeoutMs?: number;
}

/** An answer's rows and what the API said besides (a `Warning` about fields it ignored). */
export type QueryAnswer = SqlResult & { warning?: string };

/** Bound of one call: a paused lake is woken by the API server, which waits at most 3 minutes. */
const CALL_TIMEOUT_MS = 200_000;

/** The message of a refusal, with the advice for the usual ones. */
function refusalMessage(status: number, code: string, message: string): string {
  if (status === 401)
    return `the lake token was refused (${message}): a token is valid only while the prompt that received it runs`;
  if (status === 504)
    return `the lake did not answer in time (${code}): ${message}. Try a smaller query, or a longer --wait-timeout`;
  return `${message} (${code}, HTTP ${status})`;
}

export class LakeApi {
  constructor(
    private readonly settings: LakeApiSettings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async datasets(): Promise<Dataset[]> {
    return DatasetListSchema.parse((await this.call('GET', '/datasets')).body).datasets;
  }

  async views(): Promise<View[]> {
    return ViewListSchema.parse((await this.call('GET', '/views')).body).views;
  }

  async query(sql: string, options: QueryOptions = {}): Promise<QueryAnswer> {
    const { body, warning } = await this.call('POST', '/sql', {
      query: sql,
      ...(options.waitFor === undefined || options.waitFor.length === 0 ? {} : { waitFor: options.waitFor }),
      ...(options.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: options.waitTimeoutMs }),
    });
    const result = SqlResultSchema.loose().safeParse(body);
    if (!result.success)
      throw new LakeClientError('the lake API answered something that is not a SQL result');
    return { ...result.data, ...(warning === undefined ? {} : { warning }) };
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ body: unknown; warning: string | undefined }> {
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.settings.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.settings.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      const reason = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
      throw new LakeClientError(`cannot reach the lake API at ${this.settings.url}: ${reason}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LakeClientError(`the lake API answered HTTP ${res.status} without JSON`);
    }
    if (!res.ok) {
      const refusal = LakeErrorBodySchema.safeParse(json);
      throw new LakeClientError(
        refusal.success
          ? refusalMessage(res.status, refusal.data.code, refusal.data.error)
          : `the lake API answered HTTP ${res.status}`,
      );
    }
    return { body: json, warning: res.headers.get('warning') ?? undefined };
  }
}
