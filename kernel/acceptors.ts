// Listening sockets that can outlive a kernel. Each listener's address is bound once, here, and the
// connections it accepts are handed to the server of the kernel attached now (`emit('connection')`,
// as node:http documents for injected connections). While no server is attached — a restart in
// progress — accepted connections wait, unread, and go to the next kernel's server when it attaches:
// clients see a pause, never a refused connection. Every accepted connection is counted against the
// connection limits shared by all acceptors (connection-limits.ts); one over a cap is closed at once.
import { createServer, type Server, type Socket } from 'node:net'
import { ConnectionLimits } from './connection-limits.js'

/** node:http starts its connection checks (header and request timeouts) when a server starts listening. */
const CHECKS_STARTED = new WeakSet<Server>()

export class Acceptor {
  readonly host: string
  /** The configured port (0: any free one, kept across restarts once bound). */
  readonly port: number
  /** Bound with SO_REUSEPORT: other sockets (of this process's threads) may bind the same address and share its connections. */
  readonly reusePort: boolean
  readonly #server: Server
  readonly #limits: ConnectionLimits
  #target: Server | undefined
  readonly #waiting = new Set<Socket>()

  constructor (host: string, port: number, limits: ConnectionLimits, reusePort = false) {
    this.host = host
    this.port = port
    this.reusePort = reusePort
    this.#limits = limits
    // Paused: a waiting connection's bytes stay in the kernel until its server reads them.
    this.#server = createServer({ pauseOnConnect: true }, socket => { this.#accept(socket) })
  }

  async bind (): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen({ host: this.host, port: this.port, ...(this.reusePort && { reusePort: true }) }, () => { this.#server.off('error', reject); resolve() })
    })
  }

  /** The port bound. */
  get boundPort (): number {
    const address = this.#server.address()
    return typeof address === 'object' && address !== null ? address.port : this.port
  }

  /** Hand this listener's connections to `target` (a server that never listens itself), the waiting ones first. */
  attach (target: Server): void {
    if (!CHECKS_STARTED.has(target)) {
      CHECKS_STARTED.add(target)
      target.emit('listening')
    }
    this.#target = target
    for (const socket of this.#waiting) this.#handOver(socket, target)
    this.#waiting.clear()
  }

  /** Stop handing connections to `target`; new ones wait for the next server. */
  detach (target: Server): void {
    if (this.#target === target) this.#target = undefined
  }

  #accept (socket: Socket): void {
    if (!this.#limits.admit(socket)) {
      socket.on('error', ignore)
      socket.destroy()
      return
    }
    if (this.#target !== undefined) {
      this.#handOver(socket, this.#target)
      return
    }
    this.#waiting.add(socket)
    socket.on('error', ignore)
    socket.once('close', () => { this.#waiting.delete(socket) })
  }

  #handOver (socket: Socket, target: Server): void {
    socket.off('error', ignore)
    target.emit('connection', socket)
    socket.resume()
  }

  /** Stop accepting (the address is free at once); connections still waiting are closed, handed ones are their server's. */
  close (): void {
    for (const socket of this.#waiting) socket.destroy()
    this.#waiting.clear()
    if (this.#server.listening) this.#server.close()
  }
}

function ignore (): void {}

/** The acceptors of a server's listeners, by listener name. */
export class Acceptors {
  readonly #byName = new Map<string, Acceptor>()
  /** The caps every acceptor counts its connections against (the kernel configures them at each start). */
  readonly limits = new ConnectionLimits()

  /**
   * The acceptor of listener `name` on host:port: the one bound already when the address (and
   * `reusePort`) is the same, else a new one (an address that changed closes the old one first: that
   * cannot be seamless).
   */
  async acquire (name: string, host: string, port: number, reusePort = false): Promise<Acceptor> {
    const known = this.#byName.get(name)
    if (known !== undefined && known.host === host && known.port === port && known.reusePort === reusePort) return known
    this.#byName.delete(name)
    known?.close()
    const acceptor = new Acceptor(host, port, this.limits, reusePort)
    await acceptor.bind()
    this.#byName.set(name, acceptor)
    return acceptor
  }

  /** Close the acceptors of listeners not named in `keep` (listeners the running kernel no longer has). */
  closeExcept (keep: ReadonlySet<string>): void {
    for (const [name, acceptor] of this.#byName) {
      if (keep.has(name)) continue
      this.#byName.delete(name)
      acceptor.close()
    }
  }

  closeAll (): void {
    this.closeExcept(new Set())
  }
}
