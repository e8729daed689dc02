import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';

/** What stands in for a server path in a response. */
export const REDACTED_PATH = '<server path>';

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The directories this server works in (its working directory — where `./data` lives by default —,
 * the temporary directory, the home directory), longest first; `/` alone is not one.
 */
const roots = [...new Set([process.cwd(), tmpdir(), homedir()].map((root) => resolve(root)))]
  .filter((root) => root.length > 1)
  .sort((a, b) => b.length - a.length);

/** A root, as a whole name (`/root` but not `/rootfs`), and the rest of the path after it. */
const UNDER_ROOT =
  roots.length === 0
    ? undefined
    : new RegExp(`(?:${roots.map(escapeRegExp).join('|')})(?![\\w.-])[^\\s"'\`:;,()]*`, 'g');

/** Error texts never carry this server's absolute paths (they tell an attacker its layout). */
export const withoutServerPaths = (text: string): string =>
  UNDER_ROOT === undefined ? text : text.replace(UNDER_ROOT, REDACTED_PATH);

/** An absolute path of two or more segments, not part of a URL or a relative path. */
const ABSOLUTE_PATH = /(?<![\w.~:/-])\/(?:[\w.@+-]+\/)+[\w.@+-]*/g;

/**
 * A downstream engine's message (DuckDB's, through the lake) without the absolute paths of the
 * machine it runs on — a spill file, a staging directory — keeping those the client's own text
 * named (its query quoting a file is its own business).
 */
export const withoutEnginePaths = (message: string, clientText: string): string =>
  withoutServerPaths(message).replace(ABSOLUTE_PATH, (path) =>
    clientText.includes(path) ? path : REDACTED_PATH,
  );
