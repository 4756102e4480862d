// A worker thread of the proxy: it binds the proxy's ports too (SO_REUSEPORT, so the system spreads
// new connections over every thread bound to them) and serves its connections with the same servers
// as the main thread (fast lane and general path, HTTP/2, middleware), its own connections to
// replicas and its own copy of the routing table, which the main thread replaces whenever its own
// changes. Certificates are asked of the main thread by name and kept a minute; failures, counts and
// drains go back to it. Started by pool.ts with a WorkerInit.
import { parentPort, workerData } from 'node:worker_threads'
import type { Server, Socket } from 'node:net'
import { createSecureContext, type SecureContext } from 'node:tls'
import { WorkerCounts } from '../metrics.js'
import { Pools } from '../pools.js'
import { RouteTable, type Upstream } from '../route-table.js'
import { proxyServer, proxyTlsServer, UNKNOWN_HOST, type ProxyFront } from '../runtime.js'
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js'

/** How often counts go to the main thread. */
const REPORT_MS = 1000
/** A certificate's context is asked for again after this long (another master may have renewed it). */
const CERTIFICATE_TTL_MS = 60_000

const port = parentPort as NonNullable<typeof parentPort>
const init = workerData as WorkerInit
const post = (message: FromWorker): void => { port.postMessage(message) }

const table = new RouteTable(init.statics)
const pools = new Pools(init.pools)
const counts = new WorkerCounts()
let challenges = new Map<string, string>()
let secure = new Set<string>()

const failed = (upstream: Upstream, why: string): void => { post({ type: 'failed', upstream: upstream.id, why }) }
const forwarding = { table, pools, metrics: counts, failed }

/** Certificates by name, asked of the main thread. */
const contexts = new Map<string, { context: Promise<SecureContext>, at: number }>()
const asked = new Map<number, { resolve: (pair: { cert: string, key: string }) => void, reject: (err: Error) => void }>()
let nextId = 0
const pairOf = async (name: string): Promise<{ cert: string, key: string }> => await new Promise((resolve, reject) => {
  const id = nextId++
  asked.set(id, { resolve, reject })
  post({ type: 'certificate', id, name })
})
const contextFor = async (servername: string): Promise<SecureContext> => {
  const name = table.route(servername)?.domain ?? UNKNOWN_HOST
  const now = Date.now()
  let cached = contexts.get(name)
  if (cached === undefined || now - cached.at > CERTIFICATE_TTL_MS) {
    cached = { context: pairOf(name).then(pair => createSecureContext(pair)), at: now }
    contexts.set(name, cached)
    cached.context.catch(() => { contexts.delete(name) })
  }
  return await cached.context
}

const http = proxyServer(init.settings, { ...forwarding, challenge: token => challenges.get(token), secure: domain => secure.has(domain), httpsPort: () => init.https.port })
const https = proxyTlsServer(init.settings, forwarding, contextFor)
const fronts: Array<ProxyFront<Server>> = [http, https]
const sockets = new Set<Socket>()
let connections = 0
for (const front of fronts) {
  front.on('connection', (socket: Socket) => {
    connections++
    sockets.add(socket)
    socket.once('close', () => { sockets.delete(socket) })
  })
}

const listen = async (front: Server, address: { host: string, port: number }): Promise<void> => {
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject)
    front.listen({ host: address.host, port: address.port, reusePort: true }, () => { front.off('error', reject); resolve() })
  })
}

/** Drains told of, by sequence: each answered once its replica has no request of this worker in flight. */
const drain = (id: string, seq: number, timeoutMs: number): void => {
  const upstream = table.upstream(id)
  if (upstream === undefined || upstream.inflight === 0) {
    post({ type: 'drained', seq })
    return
  }
  upstream.draining = true
  let done = false
  const answer = (): void => {
    if (done) return
    done = true
    clearTimeout(timer)
    post({ type: 'drained', seq })
  }
  const timer = setTimeout(answer, timeoutMs)
  const before = upstream.idle
  upstream.idle = () => { before?.(); answer() }
}

const close = async (graceMs: number): Promise<void> => {
  clearInterval(reporter)
  for (const front of fronts) {
    front.close()
    front.drain()
  }
  const deadline = Date.now() + graceMs
  while (sockets.size > 0 && Date.now() < deadline) {
    for (const front of fronts) front.closeIdleConnections()
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  for (const front of fronts) front.closeAllConnections()
  report()
  await pools.closeAll()
  process.exit(0)
}

const receive = (message: ToWorker): void => {
  switch (message.type) {
    case 'table': {
      const gone = table.restore(message.routes, true)
      for (const [id, healthy, draining] of message.states) {
        const upstream = table.upstream(id)
        if (upstream !== undefined) Object.assign(upstream, { healthy, draining })
      }
      secure = new Set(message.secure)
      for (const upstream of gone) void pools.close(upstream.origin)
      break
    }
    case 'challenges': challenges = new Map(message.tokens); break
    case 'certificates': contexts.clear(); break
    case 'certificate': {
      const waiting = asked.get(message.id)
      asked.delete(message.id)
      if (message.pair !== undefined) waiting?.resolve(message.pair)
      else waiting?.reject(new Error(message.error ?? 'no certificate'))
      break
    }
    case 'drain': drain(message.upstream, message.seq, message.timeoutMs); break
    case 'close': void close(message.graceMs); break
  }
}
port.on('message', receive)

const report = (): void => {
  const taken = counts.take()
  if (taken === undefined && connections === 0) return
  post({ type: 'counts', ...(taken !== undefined && { report: taken }), connections })
  connections = 0
}
const reporter = setInterval(report, REPORT_MS)

// Clients without SNI get the certificate of unknown names, as on the main thread.
https.setSecureContext(await pairOf(UNKNOWN_HOST))
await listen(http, init.http)
await listen(https, init.https)
post({ type: 'listening' })
