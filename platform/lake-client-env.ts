/**
 * How a prompt's processes find their organization's context lake (docs/lake-client.md): the
 * operator sets these for each prompt whose workspace reaches the API server, and the `agentry
 * lake` client reads them. Named once here for both.
 */
export const LAKE_CLIENT_ENV = {
  /** The lake's API as the workspace reaches it: `<API server>/v1/context-lake`. */
  url: 'AGENTRY_LAKE_URL',
  /** The prompt's token: read-only, its organization's lake only, valid while the prompt runs. */
  token: 'AGENTRY_LAKE_TOKEN',
} as const;

/** The context-lake routes below the API server's address. */
export const LAKE_API_PATH = '/v1/context-lake';
