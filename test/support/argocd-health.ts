// Runs our Argo CD health checks (deploy/argocd/health/*.lua, as shipped: shared helpers first) the
// way Argo CD does: the object as the global `obj`, the returned table read for status and message. Argo CD embeds
// gopher-lua, a Lua 5.1, so the scripts run here under Debian's lua5.1 (scripts/test-packages.txt).
import { z } from 'zod';
import { healthScript } from '../../scripts/argocd-health.js';
import { run } from '../cluster/harness/tools.js';

const LUA = 'lua5.1';

export const ArgoHealthSchema = z.object({
  status: z.enum(['Healthy', 'Progressing', 'Degraded', 'Suspended']),
  message: z.string(),
});
export type ArgoHealth = z.infer<typeof ArgoHealthSchema>;

/** A Lua string literal holding exactly these characters (as UTF-8 bytes). */
const luaString = (text: string): string =>
  `"${[...Buffer.from(text, 'utf8')]
    .map(
      (byte) =>
        byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c
          ? String.fromCharCode(byte)
          : `\\${String(byte).padStart(3, '0')}`, // three digits: a digit after it is not part of it
    )
    .join('')}"`;

/** A JSON value as a Lua table constructor, as Argo CD hands an object to a health script. */
export function toLuaLiteral(value: unknown): string {
  if (typeof value === 'string') return luaString(value);
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(toLuaLiteral).join(',')}}`;
  if (typeof value === 'object' && value !== null) {
    const fields = Object.entries(value).filter(([, field]) => field !== undefined && field !== null);
    return `{${fields.map(([key, field]) => `[${luaString(key)}]=${toLuaLiteral(field)}`).join(',')}}`;
  }
  throw new Error(`no Lua literal for a ${typeof value}`);
}

/** A chunk that sets `obj`, runs the check as a chunk of its own (as Argo CD does) and prints hs. */
const program = (script: string, object: unknown): string =>
  [
    `obj = ${toLuaLiteral(object)}`,
    `local check = assert(loadstring(${luaString(script)}, "health check"))`,
    'local hs = check()',
    'io.write(hs.status, "\\n", tostring(hs.message))',
  ].join('\n');

/** What Argo CD would show as the health of this object of our kind. */
export async function argoHealth(kind: string, object: unknown): Promise<ArgoHealth> {
  let output: string;
  try {
    output = await run(LUA, ['-'], { input: program(await healthScript(kind), object), timeoutMs: 30_000 });
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT')
      throw new Error(`${LUA} is not installed: run scripts/ensure-packages.sh lua5.1 (as root)`, {
        cause: err,
      });
    throw err;
  }
  const newline = output.indexOf('\n');
  return ArgoHealthSchema.parse({ status: output.slice(0, newline), message: output.slice(newline + 1) });
}
