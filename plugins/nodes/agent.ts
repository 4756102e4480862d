// The agent's end of the channel: connects to the leader with its agent token, says hello, sends a
// heartbeat (engine health, and its containers when they changed) every interval, applies each desired
// state with its own reconciler and reports the outcome, answers requests, and reconnects with backoff
// whenever the channel drops or the leader stops answering pings. Its containers keep running meanwhile.
// Given several masters' addresses, it tries them in turn (a master that does not lead refuses the
// join), so it follows the leader after a failover: a round of refusals waits with backoff.
import type { Logger } from 'pino'
import type { WebSocket } from 'ws'
import {
  CLOSE, PROTOCOL_VERSION, parseLeaderMessage,
  type AgentMessage, type DeploySummary, type DesiredMessage, type EngineReport, type ReportedContainer, type RequestMessage
} from './protocol.js'
import type { ServiceSpec } from '../reconciler/api.js'

/** Longest wait for the leader's proxy to drain a container or to see a new one serve. */
const TRAFFIC_TIMEOUT_MS = 120_000

export interface AgentIdentity {
  id: string
  name: string
  version: string
  address?: string
}

export interface AgentDeps {
  /** ws://host:port/api/v1/cluster/join (or wss://) of each master, tried in turn. */
  urls: string[]
  /** The agent token, asked at each attempt (a token file is read again, so a rotated token is used without a restart); throws when there is none. */
  token(): string
  /** Said after a refusal of the token (401, 403): where it comes from and what to do. */
  tokenHint?: string
  identity(): Promise<AgentIdentity>
  /** The engine's health, bounded in time. */
  engine(): Promise<EngineReport>
  /** The containers this node runs; throws when the engine does not answer. */
  containers(): Promise<ReportedContainer[]>
  /** Run exactly these services with these replicas (any other is removed). */
  apply(desired: DesiredMessage): Promise<DeploySummary>
  /** Answer a request of the leader (restart, stop, logs). */
  handle(request: RequestMessage): Promise<unknown>
  log: Logger
  /** Heartbeat interval until the leader says its own. */
  heartbeatIntervalMs: number
  reconnectMinMs?: number
  reconnectMaxMs?: number
}

export type LinkState = 'connecting' | 'connected' | 'disconnected' | 'stopped'

export class AgentLink {
  readonly #deps: AgentDeps
  #state: LinkState = 'disconnected'
  #socket: WebSocket | undefined
  #timer: NodeJS.Timeout | undefined
  #retry: NodeJS.Timeout | undefined
  #failures = 0
  /** The address of the current or next attempt, in `urls`. */
  #next = 0
  #seq = 0
  #lastPong = 0
  #reported = ''
  #interval: number
  /** The newest desired state received, and the generation last applied. */
  #desired: DesiredMessage | undefined
  #appliedGeneration = -1
  #applying: Promise<void> | undefined
  #lastError = ''
  /** Resolves when the current connection attempt or session ends. */
  #session: Promise<void> = Promise.resolve()
  #trafficId = 0
  readonly #traffic = new Map<number, { resolve(): void, reject(err: Error): void, timer: NodeJS.Timeout }>()

  constructor (deps: AgentDeps) {
    this.#deps = deps
    this.#interval = deps.heartbeatIntervalMs
  }

  get state (): LinkState {
    return this.#state
  }

  /** The master of the current or next attempt. */
  get url (): string {
    return this.#deps.urls[this.#next]
  }

  /** Why the last attempt failed, when it did. */
  get lastError (): string {
    return this.#lastError
  }

  start (): void {
    if (this.#state === 'stopped') this.#state = 'disconnected'
    this.#connect()
  }

  /** Close the channel and stop reconnecting; an apply in progress finishes. */
  async stop (): Promise<void> {
    this.#state = 'stopped'
    clearTimeout(this.#retry)
    clearInterval(this.#timer)
    this.#socket?.close(CLOSE.leaving, 'the agent is stopping')
    await this.#session
    await this.#applying
  }

  #connect (): void {
    if (this.#state === 'stopped') return
    this.#state = 'connecting'
    this.#session = this.#run().catch((err: unknown) => {
      this.#lastError = err instanceof Error ? err.message : String(err)
    }).finally(() => {
      clearInterval(this.#timer)
      this.#socket = undefined
      if (this.#state === 'stopped') return
      this.#state = 'disconnected'
      const min = this.#deps.reconnectMinMs ?? 250
      const max = this.#deps.reconnectMaxMs ?? 10_000
      // The next master at once; after a round of them, backoff.
      this.#next = (this.#next + 1) % this.#deps.urls.length
      const wait = this.#next !== 0 ? min : Math.min(max, min * 2 ** Math.min(this.#failures++, 10)) * (0.75 + Math.random() / 2)
      this.#deps.log.debug({ wait: Math.round(wait), error: this.#lastError }, 'reconnecting to the leader')
      this.#retry = setTimeout(() => { this.#connect() }, wait)
    })
  }

  async #run (): Promise<void> {
    const { default: WebSocketClient } = await import('ws')
    const identity = await this.#deps.identity()
    let token: string
    try {
      token = this.#deps.token()
    } catch (err) {
      throw this.#failure(err instanceof Error ? err.message : String(err))
    }
    const socket = new WebSocketClient(this.url, { headers: { authorization: `Bearer ${token}` }, handshakeTimeout: 10_000, maxPayload: 64 * 1024 * 1024 })
    this.#socket = socket
    await new Promise<void>((resolve, reject) => {
      socket.once('unexpected-response', (_request, response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => { body += chunk.toString() })
        response.on('end', () => {
          const reason = (() => { try { return (JSON.parse(body) as { error?: string }).error ?? body } catch { return body } })()
          const status = response.statusCode ?? 0
          const hint = (status === 401 || status === 403) && this.#deps.tokenHint !== undefined ? `; ${this.#deps.tokenHint}` : ''
          reject(this.#failure(`the leader refused the join: ${status === 0 ? '?' : status} ${reason}${hint}`))
          socket.terminate()
        })
      })
      socket.once('error', reject)
      socket.once('open', () => { socket.off('error', reject); resolve() })
    })
    const closed = new Promise<void>(resolve => {
      socket.once('close', (code, reason) => {
        // A rollout waiting on the leader's proxy goes on without it.
        for (const waiter of this.#traffic.values()) {
          clearTimeout(waiter.timer)
          waiter.resolve()
        }
        this.#traffic.clear()
        this.#lastError = `channel closed (${code}${reason.length > 0 ? `: ${reason.toString()}` : ''})`
        if (this.#state !== 'stopped') this.#deps.log.warn({ code, reason: reason.toString() }, 'channel to the leader closed')
        resolve()
      })
    })
    socket.on('error', err => { this.#deps.log.warn({ err: err.message }, 'channel to the leader failed') })
    socket.on('pong', () => { this.#lastPong = Date.now() })
    socket.on('message', (data: Buffer) => { this.#message(data.toString()) })
    const containers = await this.#deps.containers().catch(() => [])
    this.#reported = JSON.stringify(containers)
    this.#send({ type: 'hello', protocol: PROTOCOL_VERSION, ...identity, engine: await this.#deps.engine(), containers })
    await closed
  }

  /** The error of a failed attempt, logged once while the same failure repeats. */
  #failure (message: string): Error {
    if (this.#lastError !== message) this.#deps.log.error(message)
    return new Error(message)
  }

  #send (message: AgentMessage): void {
    const socket = this.#socket
    if (socket !== undefined && socket.readyState === socket.OPEN) socket.send(JSON.stringify(message))
  }

  #message (text: string): void {
    const message = parseLeaderMessage(text)
    if ('invalid' in message) {
      this.#deps.log.warn({ reason: message.invalid }, 'the leader sent an invalid message')
      return
    }
    switch (message.type) {
      case 'welcome':
        this.#state = 'connected'
        this.#failures = 0
        this.#lastError = ''
        this.#interval = message.heartbeat_interval_ms
        this.#lastPong = Date.now()
        // A new session: whatever the leader sends next is applied, whatever its generation (the leader may have restarted).
        this.#appliedGeneration = -1
        this.#deps.log.info({ node: message.node.name, cluster: message.cluster }, 'joined the leader')
        clearInterval(this.#timer)
        this.#timer = setInterval(() => { void this.#beat() }, this.#interval)
        return
      case 'desired':
        if (message.generation <= this.#appliedGeneration && this.#applying === undefined) {
          // Already applied (a resend after a reconnect): report the state again.
          void this.#report(message.generation)
          return
        }
        this.#desired = message
        this.#applying ??= this.#applyLatest().finally(() => { this.#applying = undefined })
        return
      case 'traffic-done': {
        const waiter = this.#traffic.get(message.id)
        if (waiter === undefined) return
        this.#traffic.delete(message.id)
        clearTimeout(waiter.timer)
        if (message.ok) waiter.resolve()
        else waiter.reject(new Error(message.error ?? 'the leader\'s proxy refused'))
        return
      }
      case 'request':
        void this.#deps.handle(message).then(
          result => { this.#send({ type: 'reply', id: message.id, ok: true, result }) },
          (err: unknown) => { this.#send({ type: 'reply', id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) }) })
    }
  }

  /**
   * Ask the leader's proxy to drain a container before it stops, or to say when a new one serves (a
   * rollout on this node). Without a connection to the leader it resolves at once.
   */
  async traffic (op: 'drain' | 'ready', container: ReportedContainer, spec?: ServiceSpec): Promise<void> {
    const socket = this.#socket
    if (this.#state !== 'connected' || socket === undefined || socket.readyState !== socket.OPEN) return
    const id = ++this.#trafficId
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#traffic.delete(id)
        reject(new Error(`the leader did not answer ${op} of ${container.name} within ${TRAFFIC_TIMEOUT_MS / 1000} s`))
      }, TRAFFIC_TIMEOUT_MS)
      this.#traffic.set(id, { resolve, reject, timer })
      this.#send({ type: 'traffic', id, op, container, ...(spec !== undefined && { spec }) })
    })
  }

  async #report (generation: number): Promise<void> {
    const containers = await this.#deps.containers().catch(() => [])
    this.#reported = JSON.stringify(containers)
    this.#send({ type: 'applied', generation, result: { deployed: [], errors: [], changed: [], removed: [] }, containers })
  }

  /** Apply the newest desired state, again while newer ones arrive during an apply. */
  async #applyLatest (): Promise<void> {
    while (this.#desired !== undefined && this.#desired.generation > this.#appliedGeneration) {
      const desired = this.#desired
      let result: DeploySummary
      try {
        result = await this.#deps.apply(desired)
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err)
        result = { deployed: [], errors: desired.services.map(s => ({ service: s.spec.name, project: s.spec.project, error })), changed: [], removed: [] }
      }
      this.#appliedGeneration = desired.generation
      const containers = await this.#deps.containers().catch(() => [])
      this.#reported = JSON.stringify(containers)
      this.#send({ type: 'applied', generation: desired.generation, result, containers })
    }
  }

  async #beat (): Promise<void> {
    const socket = this.#socket
    if (socket === undefined || socket.readyState !== socket.OPEN) return
    if (Date.now() - this.#lastPong > Math.max(3 * this.#interval, 3000)) {
      this.#deps.log.warn('the leader stopped answering; reconnecting')
      socket.terminate()
      return
    }
    socket.ping()
    const engine = await this.#deps.engine()
    let containers: ReportedContainer[] | undefined
    if (engine.healthy && this.#applying === undefined) {
      const now = await this.#deps.containers().catch(() => undefined)
      const text = JSON.stringify(now)
      if (now !== undefined && text !== this.#reported) {
        containers = now
        this.#reported = text
      }
    }
    this.#send({ type: 'heartbeat', seq: ++this.#seq, engine, ...(containers !== undefined && { containers }) })
  }
}
