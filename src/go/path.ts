/**
 * Go's `path.Clean` for `/`-separated paths.
 *
 * Pure: no I/O.
 */
/**
 * Go `path.Clean` (and `filepath.Clean` on Unix) for `/`-separated paths:
 * empty and `.` segments dropped, `..` resolved lexically (kept at the start
 * of a relative path), no trailing slash; `''` becomes `.`.
 */
export function goPathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}
