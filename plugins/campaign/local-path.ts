// The only places a login may return to: paths on this application, of bounded length. Anything that
// a browser could read as another origin (absolute URLs, //host, /\host, control characters) is refused.
const PROBE_ORIGIN = 'http://local.invalid'

/** Longest path (with its query) a login returns to: it is kept until the login ends and sent back as a Location. */
export const MAX_LOCAL_PATH = 2048

/** Backslashes, spaces and control characters: browsers drop or rewrite them, so they could turn a path into a host. */
function unsafe (c: string): boolean {
  return c === '\\' || c <= ' ' || c === '\x7f'
}

/** `value` when it is a local path (query allowed), else undefined. */
export function localPath (value: string): string | undefined {
  if (value.length > MAX_LOCAL_PATH || !value.startsWith('/') || value.startsWith('//') || [...value].some(unsafe)) return undefined
  let parsed: URL
  try {
    parsed = new URL(value, PROBE_ORIGIN)
  } catch {
    return undefined
  }
  return parsed.origin === PROBE_ORIGIN ? value : undefined
}
