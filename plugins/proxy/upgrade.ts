// Upgraded connections (WebSocket): the handshake goes to a replica over a plain TCP connection with
// the forwarding headers added, and from then on bytes flow both ways untouched until either side
// closes. The tunnel counts as a request in flight on its replica.
import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { forwardedHeaders, portOf, requestHeaders, UPGRADE_HEADERS } from './headers.js'
import { begin, type RouteTable } from './route-table.js'

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
    const route = options.table.route(req.headers.host)
    if (route === undefined) {
      refuse(socket, 404, 'Not Found')
      return
    }
    if (route.redirect !== undefined) {
      // An alias: the handshake is sent on to the primary name, as its requests are.
      refuse(socket, 308, 'Permanent Redirect', `location: ${options.scheme}://${route.redirect}${portOf(req.headers.host)}${req.url ?? '/'}\r\n`)
      return
    }
    const upstream = options.table.pick(route)
    if (upstream === undefined) {
      refuse(socket, 503, 'Service Unavailable')
      return
    }
    const end = begin(upstream)
    const tunnel: Socket = connect({ host: upstream.host, port: upstream.port })
    const timer = setTimeout(() => { tunnel.destroy(new Error('connect timeout')) }, options.connectTimeoutMs)
    const headers = [...requestHeaders(req.rawHeaders, UPGRADE_HEADERS), ...forwardedHeaders(req.socket.remoteAddress, req.headers.host ?? '', options.scheme)]
    let lines = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1\r\n`
    for (let i = 0; i < headers.length; i += 2) lines += `${headers[i]}: ${headers[i + 1]}\r\n`
    tunnel.once('connect', () => {
      clearTimeout(timer)
      tunnel.write(`${lines}\r\n`)
      if (head.length > 0) tunnel.write(head)
      tunnel.pipe(socket)
      socket.pipe(tunnel)
    })
    const close = (): void => {
      clearTimeout(timer)
      end()
      if (!tunnel.readyState.startsWith('open')) refuse(socket, 502, 'Bad Gateway')
      tunnel.destroy()
      socket.destroy()
    }
    tunnel.once('error', close)
    tunnel.once('close', close)
    socket.once('close', close)
  }
}
