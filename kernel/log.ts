// Logging: pino, pretty-printed only when writing to a terminal, with credentials redacted.
import pino, { type Logger } from 'pino'

/** Paths never written to a log, whatever a plugin passes in. */
export const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]',
  '*.password', '*.secret', '*.token', '*.api_key', '*.access_key', '*.secret_key', '*.authorization'
]

export interface LoggerOptions {
  level: string
  /** Append to this file (created 0600) instead of standard output. */
  file?: string
}

export function createLogger (options: LoggerOptions): Logger {
  const base = { level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }
  if (options.file !== undefined) {
    return pino(base, pino.destination({ dest: options.file, sync: true, mode: 0o600, append: true }))
  }
  if (process.stdout.isTTY === true) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } })
  }
  return pino(base)
}
