// Requests only the leader carries out, sent on by a master that follows: an onRequest hook the
// control-plane plugins put on such routes. On the leader it lets the request through; on a follower
// it streams the request, unparsed, to the leader's control address (from the leadership key) and
// the leader's answer back, so clients may talk to any master. Without a known leader (an election
// under way) it answers 503 BERTH_NO_LEADER; a request already forwarded once is never forwarded
// again (two masters that each believe the other leads answer 503 rather than loop).
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { onRequestAsyncHookHandler } from 'fastify'
import type { Logger } from 'pino'
import { Unavailable, messageOf } from '../../kernel/index.js'
import type { LeaderIdentity } from './leadership.js'
import { CLUSTER_CODES } from './errors.js'

/** Set on a forwarded request: the member id of the master that forwarded it. */
export const FORWARDED_BY = 'x-berth-forwarded-by'

/** Headers that belong to one connection, never passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host'])

function passed (headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)))
}

export interface ForwardOptions {
  isLeader(): boolean
  leader(): Promise<LeaderIdentity | undefined>
  self: LeaderIdentity
  log: Logger
}

export function leaderOnly ({ isLeader, leader, self, log }: ForwardOptions): onRequestAsyncHookHandler {
  return async (request, reply) => {
    if (isLeader()) return
    const known = await leader()
    if (request.headers[FORWARDED_BY] !== undefined || known === undefined || known.address === '' || known.id === self.id) {
      throw new Unavailable('no master leads at the moment (an election takes a few seconds after a leader is lost): try again shortly', { code: CLUSTER_CODES.NO_LEADER })
    }
    const target = new URL(request.url, known.address)
    reply.hijack()
    const response = reply.raw
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    const outgoing = send(target, {
      method: request.method,
      headers: { ...passed(request.headers), host: target.host, [FORWARDED_BY]: self.id, 'x-forwarded-for': request.ip }
    }, (answer: IncomingMessage) => {
      response.writeHead(answer.statusCode ?? 502, { ...passed(answer.headers), 'x-berth-leader': known.name })
      answer.pipe(response)
      answer.on('error', () => { response.destroy() })
    })
    outgoing.on('error', err => {
      log.warn({ leader: known.address, err: messageOf(err) }, 'a request for the leader could not be forwarded')
      if (response.headersSent) {
        response.destroy()
        return
      }
      response.writeHead(CLUSTER_CODES.NO_LEADER.status, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: `the leader ${known.name} at ${known.address} cannot be reached (${messageOf(err)}): try again shortly`, code: CLUSTER_CODES.NO_LEADER.code }))
    })
    // The client gone: the leader's work goes on, its answer is dropped.
    response.on('close', () => { if (!response.writableFinished) outgoing.destroy() })
    request.raw.pipe(outgoing)
  }
}
