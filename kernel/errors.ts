// Typed errors of the kernel: every error a plugin throws that a listener maps to a status code
// and a {"error": "...", "code": "..."} body, plus the start-up errors the CLI turns into one line
// and exit code 1. The codes are stable: clients branch on them, never on the message's words.

/** One error code: its stable wire value, the status it answers with and a line on what it means. */
export interface ErrorCode<Status extends number = number> {
  readonly code: string
  readonly status: Status
  readonly meaning: string
}

/**
 * Declare a module's codes, each keyed by its wire value less `BERTH_` (a key and its code that
 * differ do not compile); statuses keep their literal types, so a code given to an error class of
 * another status does not compile either. Every declared code is listed in docs/api.md.
 */
export function errorCodes<const T extends { readonly [K in keyof T]: { readonly code: `BERTH_${K & string}`, readonly status: number, readonly meaning: string } }> (codes: T): T {
  return Object.freeze(codes)
}

/** The kernel's codes: the general code of each status, those of unknown routes and start-up, and the role check's that several plugins answer. */
export const KERNEL_CODES = errorCodes({
  BAD_REQUEST: { code: 'BERTH_BAD_REQUEST', status: 400, meaning: 'bad input: schema validation, a bad parameter or body, a malformed request' },
  UNAUTHORIZED: { code: 'BERTH_UNAUTHORIZED', status: 401, meaning: 'no valid credentials (token, key, session)' },
  FORBIDDEN: { code: 'BERTH_FORBIDDEN', status: 403, meaning: 'valid credentials that may not do this' },
  ROLE_TOO_LOW: { code: 'BERTH_ROLE_TOO_LOW', status: 403, meaning: 'the caller\'s role (a token\'s, a telemetry user\'s, an app session\'s) may not do this' },
  NOT_FOUND: { code: 'BERTH_NOT_FOUND', status: 404, meaning: 'the thing named does not exist' },
  NO_ROUTE: { code: 'BERTH_NO_ROUTE', status: 404, meaning: 'no route for this method and path' },
  METHOD_NOT_ALLOWED: { code: 'BERTH_METHOD_NOT_ALLOWED', status: 405, meaning: 'the route exists with another method' },
  REQUEST_TIMEOUT: { code: 'BERTH_REQUEST_TIMEOUT', status: 408, meaning: 'the request did not arrive in time' },
  CONFLICT: { code: 'BERTH_CONFLICT', status: 409, meaning: 'the current state refuses the change' },
  PAYLOAD_TOO_LARGE: { code: 'BERTH_PAYLOAD_TOO_LARGE', status: 413, meaning: 'a body over the route\'s or listener\'s limit' },
  URI_TOO_LONG: { code: 'BERTH_URI_TOO_LONG', status: 414, meaning: 'a request line over node\'s limit' },
  UNSUPPORTED_MEDIA_TYPE: { code: 'BERTH_UNSUPPORTED_MEDIA_TYPE', status: 415, meaning: 'a content type the route does not take' },
  UPGRADE_REQUIRED: { code: 'BERTH_UPGRADE_REQUIRED', status: 426, meaning: 'a WebSocket route asked without an upgrade' },
  TOO_MANY_REQUESTS: { code: 'BERTH_TOO_MANY_REQUESTS', status: 429, meaning: 'over a rate limit' },
  HEADERS_TOO_LARGE: { code: 'BERTH_HEADERS_TOO_LARGE', status: 431, meaning: 'request headers over node\'s limit' },
  INTERNAL: { code: 'BERTH_INTERNAL', status: 500, meaning: 'a fault of the server (details only in its log)' },
  CONFIG: { code: 'BERTH_CONFIG', status: 500, meaning: 'a configuration file or environment variable that cannot be used' },
  PLUGIN_LOAD: { code: 'BERTH_PLUGIN_LOAD', status: 500, meaning: 'a plugin set that cannot be loaded: unknown names, missing dependencies, cycles' },
  STARTUP: { code: 'BERTH_STARTUP', status: 500, meaning: 'the kernel cannot start: a port in use, an unusable state directory, a failing setup' },
  BAD_GATEWAY: { code: 'BERTH_BAD_GATEWAY', status: 502, meaning: 'the proxy could not reach a replica' },
  UNAVAILABLE: { code: 'BERTH_UNAVAILABLE', status: 503, meaning: 'a dependency does not answer, or the server is not ready' },
  GATEWAY_TIMEOUT: { code: 'BERTH_GATEWAY_TIMEOUT', status: 504, meaning: 'a replica did not answer in time' },
  STORAGE_FAULT: { code: 'BERTH_STORAGE_FAULT', status: 507, meaning: 'the store refuses writes (disk full or failing, store_limit_mb)' }
})

export class BerthError extends Error {
  /** HTTP status this error maps to when it reaches a listener. */
  readonly statusCode: number
  /** Stable machine-readable code, e.g. BERTH_NOT_FOUND. */
  readonly code: string

  /** `statusCode` and `code` of a declaration (errorCodes), or those of another BerthError passed on. */
  constructor (message: string, statusCode: number, code: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.statusCode = statusCode
    this.code = code
  }
}

const GENERAL: readonly ErrorCode[] = [
  KERNEL_CODES.BAD_REQUEST, KERNEL_CODES.UNAUTHORIZED, KERNEL_CODES.FORBIDDEN, KERNEL_CODES.NOT_FOUND,
  KERNEL_CODES.METHOD_NOT_ALLOWED, KERNEL_CODES.REQUEST_TIMEOUT, KERNEL_CODES.CONFLICT, KERNEL_CODES.PAYLOAD_TOO_LARGE,
  KERNEL_CODES.URI_TOO_LONG, KERNEL_CODES.UNSUPPORTED_MEDIA_TYPE, KERNEL_CODES.UPGRADE_REQUIRED, KERNEL_CODES.TOO_MANY_REQUESTS,
  KERNEL_CODES.HEADERS_TOO_LARGE, KERNEL_CODES.INTERNAL, KERNEL_CODES.BAD_GATEWAY, KERNEL_CODES.UNAVAILABLE,
  KERNEL_CODES.GATEWAY_TIMEOUT, KERNEL_CODES.STORAGE_FAULT
]

/** The code of an answer with `status` when nothing more specific is known. */
export const CODE_OF_STATUS: Readonly<Record<number, string>> = Object.fromEntries(GENERAL.map(c => [c.status, c.code]))

/** The general code of `status`: its own, else that of its class (BERTH_BAD_REQUEST, BERTH_INTERNAL). */
export function codeOfStatus (status: number): string {
  return CODE_OF_STATUS[status] ?? (status >= 500 ? KERNEL_CODES.INTERNAL.code : KERNEL_CODES.BAD_REQUEST.code)
}

/**
 * Options of the kernel's errors: a code more specific than the class's. Berth's own plugins name a
 * declared code of the same status (errorCodes); a plugin of another package may give its own string.
 */
export interface ErrorDetails<Status extends number> extends ErrorOptions {
  code?: ErrorCode<Status> | string
}

export class BadRequest extends BerthError {
  constructor (message: string, options?: ErrorDetails<400>) { super(message, KERNEL_CODES.BAD_REQUEST.status, codeOf(options, KERNEL_CODES.BAD_REQUEST), options) }
}

export class Unauthorized extends BerthError {
  constructor (message = 'authentication required', options?: ErrorDetails<401>) {
    super(message, KERNEL_CODES.UNAUTHORIZED.status, codeOf(options, KERNEL_CODES.UNAUTHORIZED), options)
  }
}

export class Forbidden extends BerthError {
  constructor (message = 'forbidden', options?: ErrorDetails<403>) { super(message, KERNEL_CODES.FORBIDDEN.status, codeOf(options, KERNEL_CODES.FORBIDDEN), options) }
}

export class NotFound extends BerthError {
  constructor (message: string, options?: ErrorDetails<404>) { super(message, KERNEL_CODES.NOT_FOUND.status, codeOf(options, KERNEL_CODES.NOT_FOUND), options) }
}

export class MethodNotAllowed extends BerthError {
  constructor (message: string, options?: ErrorDetails<405>) { super(message, KERNEL_CODES.METHOD_NOT_ALLOWED.status, codeOf(options, KERNEL_CODES.METHOD_NOT_ALLOWED), options) }
}

export class Conflict extends BerthError {
  constructor (message: string, options?: ErrorDetails<409>) { super(message, KERNEL_CODES.CONFLICT.status, codeOf(options, KERNEL_CODES.CONFLICT), options) }
}

export class PayloadTooLarge extends BerthError {
  constructor (message: string, options?: ErrorDetails<413>) { super(message, KERNEL_CODES.PAYLOAD_TOO_LARGE.status, codeOf(options, KERNEL_CODES.PAYLOAD_TOO_LARGE), options) }
}

export class UnsupportedMediaType extends BerthError {
  constructor (message: string, options?: ErrorDetails<415>) { super(message, KERNEL_CODES.UNSUPPORTED_MEDIA_TYPE.status, codeOf(options, KERNEL_CODES.UNSUPPORTED_MEDIA_TYPE), options) }
}

export class Unavailable extends BerthError {
  constructor (message: string, options?: ErrorDetails<503>) { super(message, KERNEL_CODES.UNAVAILABLE.status, codeOf(options, KERNEL_CODES.UNAVAILABLE), options) }
}

function codeOf<Status extends number> (options: ErrorDetails<Status> | undefined, general: ErrorCode<Status>): string {
  const code = options?.code ?? general
  return typeof code === 'string' ? code : code.code
}

/** A problem in configuration: names the file or environment variable and the key path. */
export class ConfigError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, KERNEL_CODES.CONFIG.status, KERNEL_CODES.CONFIG.code, options) }
}

/** A plugin set that cannot be loaded: unknown names, missing dependencies, cycles. */
export class PluginLoadError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, KERNEL_CODES.PLUGIN_LOAD.status, KERNEL_CODES.PLUGIN_LOAD.code, options) }
}

/** Anything that stops the kernel from starting (port in use, unusable state directory, failing setup). */
export class StartupError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, KERNEL_CODES.STARTUP.status, KERNEL_CODES.STARTUP.code, options) }
}

/** Refuse a development aid, named by its setting (with its variable or flag), when NODE_ENV=production. */
export function developmentOnly (production: boolean, setting: string): void {
  if (production) throw new StartupError(`${setting} is for development and is refused when NODE_ENV=production`)
}

/** The message of any thrown value, for one-line reports. */
export function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
