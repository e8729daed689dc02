/**
 * Where to go after signing in: `next` comes from the address bar, so only a path of this site
 * counts (not `//host` nor `/\host`, which browsers read as another host), and not the sign-in
 * page itself; anything else is `/`.
 */
export function localPath(next: string | undefined): string {
  return next !== undefined && /^\/(?![/\\])/.test(next) && !next.startsWith('/login') ? next : '/';
}
