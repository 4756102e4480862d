// Typed errors of the kernel: every error a plugin throws that a listener maps to a status code
// and a {"error": "...", "code": "..."} body, plus the start-up errors the CLI turns into one line
// and exit code 1. The codes are stable: clients branch on them, never on the message's words.

export class BerthError extends Error {
  /** HTTP status this error maps to when it reaches a listener. */
  readonly statusCode: number
  /** Stable machine-readable code, e.g. BERTH_NOT_FOUND. */
  readonly code: string

  constructor (message: string, statusCode: number, code: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.statusCode = statusCode
    this.code = code
  }
}

/** The code of an answer with `status` when nothing more specific is known (catalogued in docs/api.md). */
export const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'BERTH_BAD_REQUEST',
  401: 'BERTH_UNAUTHORIZED',
  403: 'BERTH_FORBIDDEN',
  404: 'BERTH_NOT_FOUND',
  405: 'BERTH_METHOD_NOT_ALLOWED',
  408: 'BERTH_REQUEST_TIMEOUT',
  409: 'BERTH_CONFLICT',
  413: 'BERTH_PAYLOAD_TOO_LARGE',
  414: 'BERTH_URI_TOO_LONG',
  415: 'BERTH_UNSUPPORTED_MEDIA_TYPE',
  426: 'BERTH_UPGRADE_REQUIRED',
  429: 'BERTH_TOO_MANY_REQUESTS',
  431: 'BERTH_HEADERS_TOO_LARGE',
  500: 'BERTH_INTERNAL',
  502: 'BERTH_BAD_GATEWAY',
  503: 'BERTH_UNAVAILABLE',
  504: 'BERTH_GATEWAY_TIMEOUT',
  507: 'BERTH_STORAGE_FAULT'
}

/** The general code of `status`: its own, else that of its class (BERTH_BAD_REQUEST, BERTH_INTERNAL). */
export function codeOfStatus (status: number): string {
  return CODE_OF_STATUS[status] ?? (status >= 500 ? 'BERTH_INTERNAL' : 'BERTH_BAD_REQUEST')
}

/** Options of the kernel's errors: a plugin may name a code more specific than the class's (RECONCILER_INVALID_SPEC). */
export interface ErrorDetails extends ErrorOptions {
  code?: string
}

export class BadRequest extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 400, options?.code ?? 'BERTH_BAD_REQUEST', options) }
}

export class Unauthorized extends BerthError {
  constructor (message = 'authentication required', options?: ErrorDetails) {
    super(message, 401, options?.code ?? 'BERTH_UNAUTHORIZED', options)
  }
}

export class Forbidden extends BerthError {
  constructor (message = 'forbidden', options?: ErrorDetails) { super(message, 403, options?.code ?? 'BERTH_FORBIDDEN', options) }
}

export class NotFound extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 404, options?.code ?? 'BERTH_NOT_FOUND', options) }
}

export class MethodNotAllowed extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 405, options?.code ?? 'BERTH_METHOD_NOT_ALLOWED', options) }
}

export class Conflict extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 409, options?.code ?? 'BERTH_CONFLICT', options) }
}

export class PayloadTooLarge extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 413, options?.code ?? 'BERTH_PAYLOAD_TOO_LARGE', options) }
}

export class UnsupportedMediaType extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 415, options?.code ?? 'BERTH_UNSUPPORTED_MEDIA_TYPE', options) }
}

export class Unavailable extends BerthError {
  constructor (message: string, options?: ErrorDetails) { super(message, 503, options?.code ?? 'BERTH_UNAVAILABLE', options) }
}

/** A problem in configuration: names the file or environment variable and the key path. */
export class ConfigError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 500, 'BERTH_CONFIG', options) }
}

/** A plugin set that cannot be loaded: unknown names, missing dependencies, cycles. */
export class PluginLoadError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 500, 'BERTH_PLUGIN_LOAD', options) }
}

/** Anything that stops the kernel from starting (port in use, unusable state directory, failing setup). */
export class StartupError extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 500, 'BERTH_STARTUP', options) }
}

/** Refuse a development aid, named by its setting (with its variable or flag), when NODE_ENV=production. */
export function developmentOnly (production: boolean, setting: string): void {
  if (production) throw new StartupError(`${setting} is for development and is refused when NODE_ENV=production`)
}

/** The message of any thrown value, for one-line reports. */
export function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
