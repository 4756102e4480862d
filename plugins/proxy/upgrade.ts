// Upgraded connections (WebSocket): the handshake goes to a replica over a plain TCP connection with
// the forwarding headers added, and from then on bytes flow both ways untouched until either side
// closes. The tunnel counts as a request in flight on its replica. The route's middleware checks the
// handshake as it checks requests (an allow-list or basic auth is not bypassed by upgrading).
import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { forwardedHeaders, portOf, requestHeaders, UPGRADE_HEADERS } from './headers.js'
import { STATUS_CODES } from 'node:http'
import { begin, upstreamPath, type Route, type RouteTable } from './route-table.js'
import { requestTarget, type RequestTarget } from './request-target.js'

export interface UpgradeOptions {
  table: RouteTable
  scheme: 'http' | 'https'
  connectTimeoutMs: number
}

function refuse (socket: Duplex, status: number, reason: string, headers = ''): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers}connection: close\r\ncontent-length: 0\r\n\r\n`)
}

export function upgrader (options: UpgradeOptions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    socket.on('error', () => { socket.destroy() })
    const target = requestTarget(req)
    if ('error' in target) {
      refuse(socket, target.status, STATUS_CODES[target.status] ?? 'Refused')
      return
    }
    const route = options.table.route(target.host, target.url)
    if (route === undefined) {
      refuse(socket, 404, 'Not Found')
      return
    }
    if (route.redirect !== undefined) {
      // An alias: the handshake is sent on to the primary name, as its requests are.
      refuse(socket, 308, 'Permanent Redirect', `location: ${options.scheme}://${route.redirect}${portOf(target.host)}${target.url}\r\n`)
      return
    }
    if (!route.guard.general) {
      tunnel(options, route, req, socket, head, target)
      return
    }
    route.guard.refusal({ address: req.socket.remoteAddress, authorization: req.headers.authorization, length: undefined }).then(refusal => {
      if (refusal === undefined) tunnel(options, route, req, socket, head, target)
      else refuse(socket, refusal.status, STATUS_CODES[refusal.status] ?? 'Refused', Object.entries(refusal.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join(''))
    }, () => { refuse(socket, 500, 'Internal Server Error') })
  }
}

/** Open the tunnel to a replica of the route, the handshake sent first. */
function tunnel (options: UpgradeOptions, route: Route, req: IncomingMessage, socket: Duplex, head: Buffer, target: RequestTarget): void {
  const upstream = options.table.pick(route)
  if (upstream === undefined) {
    refuse(socket, 503, 'Service Unavailable')
    return
  }
  const end = begin(upstream)
  const connection: Socket = connect({ host: upstream.host, port: upstream.port })
  const timer = setTimeout(() => { connection.destroy(new Error('connect timeout')) }, options.connectTimeoutMs)
  const headers = [...requestHeaders(target.rawHeaders, UPGRADE_HEADERS), ...forwardedHeaders(req.socket.remoteAddress, target.host ?? '', options.scheme)]
  let lines = `${req.method ?? 'GET'} ${upstreamPath(route, target.url)} HTTP/1.1\r\n`
  for (let i = 0; i < headers.length; i += 2) lines += `${headers[i]}: ${headers[i + 1]}\r\n`
  connection.once('connect', () => {
    clearTimeout(timer)
    connection.write(`${lines}\r\n`)
    if (head.length > 0) connection.write(head)
    connection.pipe(socket)
    socket.pipe(connection)
  })
  const close = (): void => {
    clearTimeout(timer)
    end()
    if (!connection.readyState.startsWith('open')) refuse(socket, 502, 'Bad Gateway')
    connection.destroy()
    socket.destroy()
  }
  connection.once('error', close)
  connection.once('close', close)
  socket.once('close', close)
}
