// The leader's end of the channel: GET /api/v1/cluster/join upgraded to a WebSocket for agent tokens
// only; `hello` within a deadline, then heartbeats, applied reports and replies. It sends each agent
// its desired state (and waits for it to be applied) and asks it to restart, stop or show logs.
import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify'
import type { Logger } from 'pino'
import type { WebSocket } from 'ws'
import { BerthError, Conflict, KERNEL_CODES } from '../../kernel/index.js'
import {
  CLOSE, PROTOCOL_VERSION, parseAgentMessage,
  type AppliedMessage, type DesiredMessage, type HelloMessage, type LeaderMessage, type RequestMessage, type TrafficMessage
} from './protocol.js'
import type { NodeEntry, NodeRegistry } from './registry.js'
import type { ContainerState, ServiceSpec } from '../reconciler/api.js'

/** How long a new channel may take to say hello. */
const HELLO_TIMEOUT_MS = 10_000

export interface LeaderDeps {
  registry: NodeRegistry
  log: Logger
  /** The guard of the join route: agent tokens only. */
  requireAgent: onRequestAsyncHookHandler
  cluster: string
  heartbeatIntervalMs: number
  /** The desired state of a node, sent when it (re)connects; undefined when there is none yet. */
  desiredFor(node: NodeEntry): DesiredMessage | undefined
  /** A node joined, its containers changed, or it went away (`connected` false). */
  changed(node: NodeEntry, what: 'joined' | 'containers' | 'left'): void
  /** Counts heartbeats, for metrics. */
  heartbeatSeen?: () => void
  /** The leader's routers (its proxy): drain a node's container before it stops, wait for a new one to serve. */
  traffic?: {
    drain(container: ContainerState): Promise<void>
    ready(spec: ServiceSpec, id: string): Promise<void>
  }
}

interface Waiter<T> {
  resolve(value: T): void
  reject(err: Error): void
  timer: NodeJS.Timeout
}

interface Channel {
  socket: WebSocket
  node: NodeEntry
  applied: Map<number, Waiter<AppliedMessage>>
  requests: Map<number, Waiter<unknown>>
}

export class NodeUnreachable extends Error {}

export class LeaderChannel {
  readonly #deps: LeaderDeps
  readonly #channels = new Map<string, Channel>()
  #requestId = 0

  constructor (deps: LeaderDeps) {
    this.#deps = deps
  }

  /** The join route, mounted under /api/v1 on the control listener (with WebSocket support: `close` when it closes). */
  routes (): FastifyPluginAsync {
    return async app => {
      app.route({
        method: 'GET',
        url: '/cluster/join',
        onRequest: this.#deps.requireAgent,
        // Without Upgrade: websocket the request is plain HTTP, and told what the route is.
        handler: async (_request, reply) => {
          reply.header('upgrade', 'websocket')
          throw new BerthError('the agents\' channel is a WebSocket: send Upgrade: websocket', KERNEL_CODES.UPGRADE_REQUIRED.status, KERNEL_CODES.UPGRADE_REQUIRED.code)
        },
        wsHandler: (socket, request) => { this.#accept(socket, request.ip) }
      })
    }
  }

  connected (nodeId: string): boolean {
    return this.#channels.has(nodeId)
  }

  #accept (socket: WebSocket, remote: string): void {
    const timer = setTimeout(() => { socket.close(CLOSE.protocol, 'no hello within 10 s') }, HELLO_TIMEOUT_MS)
    socket.once('close', () => { clearTimeout(timer) })
    socket.once('message', (data: Buffer) => {
      clearTimeout(timer)
      const message = parseAgentMessage(data.toString())
      if ('invalid' in message || message.type !== 'hello') {
        socket.close(CLOSE.protocol, 'invalid' in message ? message.invalid : 'the first message must be hello')
        return
      }
      if (message.protocol !== PROTOCOL_VERSION) {
        socket.close(CLOSE.version, `this leader speaks protocol ${PROTOCOL_VERSION}, the agent ${message.protocol}`)
        return
      }
      this.#hello(socket, message, remote).catch((err: unknown) => {
        const conflict = err instanceof Conflict
        if (!conflict) this.#deps.log.error({ err }, 'agent join failed')
        socket.close(conflict ? CLOSE.nameTaken : CLOSE.protocol, (err as Error).message.slice(0, 120))
      })
    })
  }

  async #hello (socket: WebSocket, hello: HelloMessage, remote: string): Promise<void> {
    const address = hello.address !== undefined && hello.address !== '' ? hello.address : remote.replace(/^::ffff:/, '')
    const node = await this.#deps.registry.join(hello, address)
    const previous = this.#channels.get(node.id)
    if (previous !== undefined) {
      this.#drop(previous, 'replaced by a newer connection of the same node')
      previous.socket.close(CLOSE.replaced, 'replaced by a newer connection')
    }
    if (socket.readyState !== socket.OPEN) {
      this.#deps.registry.disconnect(node.id)
      return
    }
    const channel: Channel = { socket, node, applied: new Map(), requests: new Map() }
    this.#channels.set(node.id, channel)
    socket.on('message', (data: Buffer) => { this.#message(channel, data.toString()) })
    socket.on('close', () => { this.#left(channel) })
    socket.on('error', err => { this.#deps.log.warn({ node: node.name, err: err.message }, 'agent channel error') })
    this.#deps.log.info({ node: node.name, id: node.id, address }, 'agent joined')
    this.#send(channel, { type: 'welcome', protocol: PROTOCOL_VERSION, node: { id: node.id, name: node.name }, cluster: this.#deps.cluster, heartbeat_interval_ms: this.#deps.heartbeatIntervalMs })
    this.#deps.changed(node, 'joined')
    const desired = this.#deps.desiredFor(node)
    if (desired !== undefined) this.#send(channel, desired)
  }

  #message (channel: Channel, text: string): void {
    const message = parseAgentMessage(text)
    if ('invalid' in message) {
      this.#deps.log.warn({ node: channel.node.name, reason: message.invalid }, 'agent sent an invalid message; closing its channel')
      channel.socket.close(CLOSE.protocol, message.invalid.slice(0, 120))
      return
    }
    switch (message.type) {
      case 'heartbeat':
        this.#deps.registry.heartbeat(channel.node.id, message)
        this.#deps.heartbeatSeen?.()
        if (message.containers !== undefined) this.#deps.changed(channel.node, 'containers')
        return
      case 'applied': {
        this.#deps.registry.setContainers(channel.node.id, message.containers)
        for (const [generation, waiter] of channel.applied) {
          if (generation > message.generation) continue
          channel.applied.delete(generation)
          clearTimeout(waiter.timer)
          waiter.resolve(message)
        }
        this.#deps.changed(channel.node, 'containers')
        return
      }
      case 'reply': {
        const waiter = channel.requests.get(message.id)
        if (waiter === undefined) return
        channel.requests.delete(message.id)
        clearTimeout(waiter.timer)
        if (message.ok) waiter.resolve(message.result)
        else waiter.reject(new Error(message.error ?? 'failed'))
        return
      }
      case 'traffic':
        void this.#traffic(channel, message)
        return
      case 'hello':
        channel.socket.close(CLOSE.protocol, 'hello twice')
    }
  }

  /** A rollout on the agent: the leader's proxy drains the old container, or waits for the new one to serve. */
  async #traffic (channel: Channel, message: TrafficMessage): Promise<void> {
    const node = channel.node
    const container = { ...message.container, node: node.name }
    try {
      if (message.op === 'drain') {
        await this.#deps.traffic?.drain(container)
      } else if (message.spec !== undefined) {
        this.#deps.registry.setContainers(node.id, [...node.containers.filter(c => c.id !== container.id), message.container])
        await this.#deps.traffic?.ready(message.spec, container.id)
      }
      this.#send(channel, { type: 'traffic-done', id: message.id, ok: true })
    } catch (err) {
      this.#send(channel, { type: 'traffic-done', id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) })
    }
  }

  #left (channel: Channel): void {
    if (this.#channels.get(channel.node.id) !== channel) return
    this.#drop(channel, `node "${channel.node.name}" went offline`)
    this.#deps.registry.disconnect(channel.node.id)
    this.#deps.log.warn({ node: channel.node.name }, 'agent channel closed')
    this.#deps.changed(channel.node, 'left')
  }

  /** Forget a channel: its waiters fail. */
  #drop (channel: Channel, reason: string): void {
    if (this.#channels.get(channel.node.id) === channel) this.#channels.delete(channel.node.id)
    for (const waiters of [channel.applied, channel.requests] as Array<Map<number, Waiter<unknown>>>) {
      for (const waiter of waiters.values()) {
        clearTimeout(waiter.timer)
        waiter.reject(new NodeUnreachable(reason))
      }
      waiters.clear()
    }
  }

  #send (channel: Channel, message: LeaderMessage): void {
    if (channel.socket.readyState === channel.socket.OPEN) channel.socket.send(JSON.stringify(message))
  }

  /** Send a node its desired state; resolves when it reports it applied (this generation or a later one). */
  async apply (nodeId: string, desired: DesiredMessage, timeoutMs: number): Promise<AppliedMessage> {
    const channel = this.#channels.get(nodeId)
    if (channel === undefined) throw new NodeUnreachable(`node ${this.#deps.registry.get(nodeId)?.name ?? nodeId} is not connected`)
    const applied = new Promise<AppliedMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        channel.applied.delete(desired.generation)
        reject(new NodeUnreachable(`node "${channel.node.name}" did not apply its services within ${timeoutMs / 1000} s`))
      }, timeoutMs)
      channel.applied.set(desired.generation, { resolve, reject, timer })
    })
    this.#send(channel, desired)
    return await applied
  }

  /** Send a desired state without waiting (a node that is not connected gets it when it returns). */
  offer (nodeId: string, desired: DesiredMessage): boolean {
    const channel = this.#channels.get(nodeId)
    if (channel === undefined) return false
    this.#send(channel, desired)
    return true
  }

  /** An operation on a node's own containers; its answer. */
  async request (nodeId: string, op: Omit<RequestMessage, 'type' | 'id'>, timeoutMs: number): Promise<unknown> {
    const channel = this.#channels.get(nodeId)
    if (channel === undefined) throw new NodeUnreachable(`node ${this.#deps.registry.get(nodeId)?.name ?? nodeId} is not connected`)
    const id = ++this.#requestId
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        channel.requests.delete(id)
        reject(new NodeUnreachable(`node "${channel.node.name}" did not answer ${op.op} within ${timeoutMs / 1000} s`))
      }, timeoutMs)
      channel.requests.set(id, { resolve, reject, timer })
    })
    this.#send(channel, { type: 'request', id, ...op })
    return await answer
  }

  /** Close a node's channel (it was forgotten). */
  disconnect (nodeId: string, reason: string): void {
    const channel = this.#channels.get(nodeId)
    if (channel === undefined) return
    this.#drop(channel, reason)
    channel.socket.close(CLOSE.replaced, reason)
  }

  /** Close every channel (the leader is stopping, or no longer leads): agents reconnect to the next one. */
  close (reason = 'the leader is stopping'): void {
    for (const channel of [...this.#channels.values()]) {
      this.#drop(channel, reason)
      this.#deps.registry.disconnect(channel.node.id)
      channel.socket.close(CLOSE.leaving, reason)
    }
  }
}
