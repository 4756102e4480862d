// How a failure becomes an answer: the status code, the client-facing message and the stable code of
// any error a route throws (5xx details go to the log only). Type-only imports: plugins use it
// without loading fastify.
import type { FastifyError, FastifyRequest } from 'fastify'
import { BerthError, codeOfStatus } from './errors.js'
import { describeStorageFault, isStorageFault, noteStorageFault, StorageFault } from './storage-fault.js'

/** A request URL without its query string, which may carry credentials and is never logged. */
export const pathOf = (url: string): string => url.split('?')[0]

export interface HttpFailure {
  status: number
  message: string
  /** Stable and machine-readable: the error's own code, else the general code of its status. */
  code: string
}

/** Status, client-facing message and code of any error; 5xx details are for the log only. */
export function describeHttpError (error: FastifyError, request?: FastifyRequest): HttpFailure {
  if (isStorageFault(error) && !(error instanceof StorageFault)) {
    // A commit or a file write failed for want of space (or an I/O error): the store refuses writes until it recovers.
    noteStorageFault(error)
    return { status: 507, code: codeOfStatus(507), message: `the server cannot write its state now: ${describeStorageFault(error)}; reads still work, and writes resume by themselves once there is room` }
  }
  const status = statusOf(error)
  const code = error instanceof BerthError ? error.code : codeOfStatus(status)
  if (status === 500) return { status, code, message: 'internal server error' }
  if (status === 415 && !(error instanceof BerthError)) return { status, code, message: `unsupported content type: ${request?.headers['content-type'] ?? 'none'}` }
  return { status, code, message: clientMessage(error) }
}

function statusOf (error: FastifyError): number {
  if (error instanceof BerthError) return error.statusCode
  if (error.validation !== undefined) return 400
  const status = error.statusCode
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500
}

function clientMessage (error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'request body is too large'
  if (error.validation !== undefined) {
    return `invalid ${error.validationContext ?? 'body'}: ${error.message.replace(/^(body|querystring|params|headers)\/? ?/, '')}`
  }
  return error.message
}
