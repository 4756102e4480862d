// Typed errors of the kernel: every error a plugin throws that a listener maps to a status code
// and a {"error": "..."} body, plus the start-up errors the CLI turns into one line and exit code 1.

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

export class BadRequest extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 400, 'BERTH_BAD_REQUEST', options) }
}

export class Unauthorized extends BerthError {
  constructor (message = 'authentication required', options?: ErrorOptions) {
    super(message, 401, 'BERTH_UNAUTHORIZED', options)
  }
}

export class Forbidden extends BerthError {
  constructor (message = 'forbidden', options?: ErrorOptions) { super(message, 403, 'BERTH_FORBIDDEN', options) }
}

export class NotFound extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 404, 'BERTH_NOT_FOUND', options) }
}

export class MethodNotAllowed extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 405, 'BERTH_METHOD_NOT_ALLOWED', options) }
}

export class Conflict extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 409, 'BERTH_CONFLICT', options) }
}

export class PayloadTooLarge extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 413, 'BERTH_PAYLOAD_TOO_LARGE', options) }
}

export class UnsupportedMediaType extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 415, 'BERTH_UNSUPPORTED_MEDIA_TYPE', options) }
}

export class Unavailable extends BerthError {
  constructor (message: string, options?: ErrorOptions) { super(message, 503, 'BERTH_UNAVAILABLE', options) }
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
