// Loopback ports a test gives a client before (or instead of) a server behind them: a peer that closes
// every connection at once, for clients pointed at a server that never answers, and one that forwards
// to a server once it is up. Each is bound on port 0 and held until the test ends, so the port is the
// test's alone; no port is chosen before something binds it. Last, the one exception: a guessed port
// for programs that must be told theirs before they start (probablyFreePort).
import { connect, createServer, type Socket } from 'node:net'
import { randomInt } from 'node:crypto'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** The port of a server on 127.0.0.1 that closes each connection as it arrives; closed at the test's end. */
export async function closingPort (t: Teardown): Promise<number> {
  const server = createServer(socket => { socket.destroy() })
  await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return (server.address() as { port: number }).port
}

/**
 * A port on 127.0.0.1 that stands in front of a server that is not up yet: every connection is closed
 * at once (as a client sees a server that is down) until `forward(port)`, after which each new
 * connection is piped to that port on loopback. Lets a client be given an address before the server
 * behind it binds its own port 0. Closed at the test's end.
 */
export async function laterPort (t: Teardown): Promise<{ port: number, forward: (to: number) => void }> {
  let target: number | undefined
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    if (target === undefined) { socket.destroy(); return }
    const upstream = connect(target, '127.0.0.1')
    for (const s of [socket, upstream]) { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => { socket.destroy(); upstream.destroy() }) }
    socket.pipe(upstream).pipe(socket)
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise(resolve => server.close(resolve))
  })
  return { port: (server.address() as { port: number }).port, forward: (to: number) => { target = to } }
}

const LOWEST = 20_000
const HIGHEST = 32_767

async function bindable (port: number): Promise<boolean> {
  const server = createServer()
  const bound = await new Promise<boolean>(resolve => {
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { resolve(true) })
  })
  if (bound) await new Promise(resolve => server.close(resolve))
  return bound
}

/**
 * A port that was free when this looked, for a program that must be told its port before it starts
 * and cannot report one it chose itself: the external daemons the suite runs (PostgreSQL, Redis, etcd,
 * pebble, nginx, verdaccio) and a container's fixed `extra_ports` host port.
 * It is a guess, not a reservation: the port is released before the daemon binds it. Ports are drawn
 * at random below Linux's ephemeral range (32768–60999), so a port the system hands out for
 * `listen(0)` or an outgoing connection elsewhere cannot take it in between. Never for Berth's own
 * listeners: those bind port 0 and the test reads back the port they got.
 */
export async function probablyFreePort (): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(LOWEST, HIGHEST + 1)
    if (await bindable(port)) return port
  }
  throw new Error(`no free port found between ${LOWEST} and ${HIGHEST} in 100 attempts`)
}
