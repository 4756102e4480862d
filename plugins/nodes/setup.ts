// The nodes plugin at work. On a leader: the node registry, the join channel, the scheduler the
// reconciler places replicas with, the node checks (offline, unhealthy, grace period → reschedule),
// and the cluster routes. On an agent ([cluster].join set): the link to the leader, applying what it
// sends with this node's reconciler. Imported by setup only.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { BadRequest, Conflict, Forbidden, StartupError, Unavailable, messageOf, type PluginContext } from '../../kernel/index.js'
import type { ContainerState, EngineInfo, RemoteContainer, Scheduler, ServiceSpec, Traffic } from '../reconciler/api.js'
import type { SecretService } from '../secrets/index.js'
import { TOKENS_CODES, type TokenService } from '../tokens/index.js'
import { AgentLink } from './agent.js'
import { CLUSTER_CODES, leaderRoutes, type ClusterConfig, type ClusterService, type MastersReport } from '../cluster/index.js'
import { LeaderChannel } from './leader.js'
import { nodeRecord, type NodeRecord } from './node-record.js'
import { JOIN_PATH, type AssignedService, type DeploySummary, type EngineReport, type ReportedContainer } from './protocol.js'
import { FOLLOW_INTERVAL_MS, Masters } from './masters.js'
import { PublishedContainers } from './published.js'
import { NodeRegistry, type StoredNode } from './registry.js'
import { ClusterScheduler } from './assignments.js'
import { NODES_CODES } from './errors.js'

/** The file an agent reads its token from when [cluster].join_token is empty. */
export const JOIN_TOKEN_FILE = 'join.token'
/** How long an agent may take to answer a request (restart, stop, logs). */
const REQUEST_TIMEOUT_MS = 60_000

/** What the nodes plugin needs of this node's orchestration: the reconciler's service, adapted. */
export interface LocalOrchestration {
  nodeName: string
  nodeId(): Promise<string>
  engineInfo(): Promise<EngineInfo>
  /** This node's containers (its engine only). */
  localContainers(): Promise<ContainerState[]>
  specs(): ServiceSpec[]
  /** Leader: place replicas with this scheduler from now on. */
  useScheduler(scheduler: Scheduler): void
  /** Agent: refuse changes through this node's own API; they come from the leader at `leader`. */
  managedBy(leader: string): void
  /** Agent: run exactly these services with these replicas and environments; remove any other. */
  applyAssigned(services: AssignedService[], options: { force: string[], pull: 'rules' | 'always' | 'missing' }): Promise<DeploySummary>
  /** Leader: place every service again (a node drained, undrained, forgotten or gone past its grace period). */
  reschedule(trigger: string): Promise<DeploySummary>
  stopAll(): Promise<{ containers: number }>
  restart(service: string): Promise<{ restarted: string[] }>
  /** The last `tail` lines of each of this node's containers of a service. */
  logs(service: string, tail: number): Promise<Array<{ label: string, text: string }>>
  /** Answer GET /api/v1/cluster/info (the reconciler's route) with this. */
  answerClusterInfo(answer: () => Promise<unknown>): void
  /** Leader: containers of these services changed on other nodes; the reconciler tells the routers. */
  containersChanged(services: string[]): void
  /**
   * This node's traffic hooks: on a leader, its routers (the proxy) drain and wait for agents'
   * containers too; on an agent, a router added here asks the leader's proxy.
   */
  traffic: Traffic
}

export interface ClusterInfo {
  cluster: { name?: string, instance?: string, leader: string, heartbeat_interval_secs: number, offline_after_secs: number, reschedule_after_secs: number }
  nodes: NodeRecord[]
  /** Masters on etcd: the masters alive, the leader, etcd's members (or why etcd could not be asked). */
  control_plane?: MastersReport | { error: string }
}

export interface ClusterRuntime {
  role: 'leader' | 'agent'
  /** GET /cluster/info. */
  info(): Promise<ClusterInfo | AgentInfo>
  start(): Promise<void>
  stop(): Promise<void>
  /** The leader's registry (undefined on an agent). */
  registry?: NodeRegistry
  scheduler?: ClusterScheduler
  link?: AgentLink
}

export interface AgentInfo {
  cluster: { name?: string }
  agent: { leader: string, link: string, error?: string, node: string, master: string }
}

/** ws(s)://host:port/api/v1/cluster/join from `host:port`, an http(s) URL or a ws(s) URL. */
export function joinUrl (join: string): string {
  const text = join.trim()
  const withScheme = /^[a-z]+:\/\//i.test(text) ? text : `ws://${text}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    throw new StartupError(`[cluster].join: "${join}" is not <host>:<port> of the leader's control listener`)
  }
  if (url.protocol === 'http:') url.protocol = 'ws:'
  if (url.protocol === 'https:') url.protocol = 'wss:'
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new StartupError(`[cluster].join: ${url.protocol} is not a scheme for the leader (host:port, http, https, ws or wss)`)
  if (url.port === '' && !/^[a-z]+:\/\//i.test(text)) url.port = '6880'
  url.pathname = JOIN_PATH
  return url.href
}

/**
 * The agent token at each attempt: [cluster].join_token, else the file join.token in the state
 * directory, read again every time (a token rotated there is used without a restart); what to say
 * when the leader refuses it. No token at all refuses the start.
 */
function joinToken (config: ClusterConfig, stateDir: string): { read(): string, hint: string } {
  if (config.join_token !== '') {
    const token = config.join_token.trim()
    return { read: () => token, hint: 'the agent token is [cluster].join_token (BERTH_JOIN_TOKEN): set a valid one and restart this agent' }
  }
  const file = join(stateDir, JOIN_TOKEN_FILE)
  if (!existsSync(file)) throw new StartupError(`[cluster].join is set but there is no agent token: set [cluster].join_token (BERTH_JOIN_TOKEN) or write it to ${file} (create one on the leader: berth tokens create <node> --role agent)`)
  return {
    read: () => {
      try {
        return readFileSync(file, 'utf8').trim()
      } catch (err) {
        throw new Error(`the agent token cannot be read from ${file}: ${messageOf(err)}`)
      }
    },
    hint: `the agent token is read from ${file} at each attempt: write a valid one there (on the leader: berth tokens create <node> --role agent)`
  }
}

/** Whether an address only this host reaches. */
function loopbackOrWildcard (host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '' || host.startsWith('127.') || host === '::1' || host === 'localhost'
}

async function engineReport (orchestration: LocalOrchestration, timeoutMs: number): Promise<EngineReport> {
  let timer: NodeJS.Timeout | undefined
  try {
    const info = await Promise.race([
      orchestration.engineInfo(),
      new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`the container engine did not answer within ${timeoutMs / 1000} s`)) }, timeoutMs) })
    ])
    return { healthy: true, kind: info.kind, version: info.version, containers_running: info.containers_running, cpus: info.cpus, memory_bytes: info.memory_bytes }
  } catch (err) {
    return { healthy: false, error: err instanceof Error ? err.message : String(err) }
  } finally {
    clearTimeout(timer)
  }
}

export interface ClusterDeps {
  /** The cluster plugin: the [cluster] section, the state the registry and the assignment live in, the leadership. */
  cluster: ClusterService
  orchestration: LocalOrchestration
  tokens: TokenService
  secrets: SecretService
  version: string
  /** The reconciler's instance label, shown in cluster info. */
  instance?: string
}

export async function setupNodes (ctx: PluginContext, deps: ClusterDeps): Promise<ClusterRuntime> {
  const config = deps.cluster.settings
  const intervalMs = config.heartbeat_interval_secs * 1000
  if (config.offline_after_secs <= config.heartbeat_interval_secs) {
    throw new StartupError(`[cluster].offline_after_secs (${config.offline_after_secs}) must be longer than heartbeat_interval_secs (${config.heartbeat_interval_secs})`)
  }
  return config.join === ''
    ? await setupLeader(ctx, deps, intervalMs)
    : setupAgent(ctx, deps, intervalMs)
}

function setupAgent (ctx: PluginContext, deps: ClusterDeps, intervalMs: number): ClusterRuntime {
  const config = deps.cluster.settings
  const { orchestration } = deps
  // Several masters: `a:6880,b:6880`, tried in turn until the leader accepts.
  const urls = config.join.split(',').map(address => address.trim()).filter(address => address !== '').map(joinUrl)
  const token = joinToken(config, ctx.stateDir)
  orchestration.managedBy(config.join)
  const advertise = config.advertise_address
  /** A container as the leader sees it: its node field dropped, a loopback or wildcard host advertised. */
  const reported = (c: ContainerState): ReportedContainer => {
    const { node: _node, ...container } = c
    if (advertise === '' || c.address === undefined || !loopbackOrWildcard(c.address.host)) return container
    return { ...container, address: { host: advertise, port: c.address.port } }
  }
  const link = new AgentLink({
    urls,
    token: token.read,
    tokenHint: token.hint,
    identity: async () => ({ id: await orchestration.nodeId(), name: orchestration.nodeName, version: deps.version, ...(advertise !== '' && { address: advertise }) }),
    engine: async () => await engineReport(orchestration, Math.min(intervalMs, 5000)),
    containers: async () => (await orchestration.localContainers()).map(reported),
    apply: async desired => await orchestration.applyAssigned(desired.services, { force: desired.force, pull: desired.pull }),
    handle: async request => {
      switch (request.op) {
        case 'stop': return (await orchestration.stopAll()).containers
        case 'restart': return (await orchestration.restart(request.service ?? '')).restarted
        case 'logs': return await orchestration.logs(request.service ?? '', request.tail ?? 100)
      }
    },
    log: ctx.log,
    heartbeatIntervalMs: intervalMs
  })
  // Rollouts on this node: the leader's proxy drains a replica before it stops and sees its successor serve before the next.
  ctx.onClose(orchestration.traffic.add({
    drain: async container => { await link.traffic('drain', reported(container)) },
    ready: async (spec, id) => {
      const container = (await orchestration.localContainers()).find(c => c.id === id)
      if (container !== undefined) await link.traffic('ready', reported(container), spec)
    }
  }))
  ctx.report({ role: 'agent', leader: config.join })
  const info = async (): Promise<AgentInfo> => ({
    cluster: { ...(config.name !== '' && { name: config.name }) },
    agent: { leader: config.join, link: link.state, master: link.url, ...(link.lastError !== '' && { error: link.lastError }), node: orchestration.nodeName }
  })
  orchestration.answerClusterInfo(info)
  return {
    role: 'agent',
    link,
    info,
    start: async () => { link.start() },
    stop: async () => { await link.stop() }
  }
}

async function setupLeader (ctx: PluginContext, deps: ClusterDeps, intervalMs: number): Promise<ClusterRuntime> {
  const config = deps.cluster.settings
  const { orchestration } = deps
  const registry = new NodeRegistry(deps.cluster.leaderState.db<StoredNode>('nodes'), {
    offlineAfterMs: config.offline_after_secs * 1000,
    rescheduleAfterMs: config.reschedule_after_secs * 1000
  })
  const leaderId = await orchestration.nodeId()
  // Masters on etcd: only the elected one keeps the registry and talks to agents; it takes the
  // registry and the placement over from the store when elected.
  const { cluster } = deps
  cluster.control?.nameSelf(orchestration.nodeName)
  const leading = (): boolean => cluster.isLeader()
  const takeOver = async (): Promise<void> => {
    const address = cluster.control === undefined ? '' : ctx.address('control').href.replace(/\/$/, '')
    await registry.registerLeader({ id: leaderId, name: orchestration.nodeName, address, version: deps.version }, await engineReport(orchestration, 5000))
    if (!config.schedule_leader) await registry.setDrained(leaderId, true)
  }
  if (cluster.control === undefined) await takeOver()
  const heartbeats = ctx.metrics.counter({ name: 'berth_cluster_heartbeats_total', help: 'Heartbeats received from agents.' })
  const nodesGauge = ctx.metrics.gauge({ name: 'berth_cluster_nodes', help: 'Nodes by state.', labelNames: ['state'] })
  const reschedules = ctx.metrics.counter({ name: 'berth_cluster_reschedules_total', help: 'Placements made again, by trigger.', labelNames: ['trigger'] })

  // The channel and the scheduler need each other: the channel asks for desired states, the scheduler sends them.
  const late: { scheduler?: ClusterScheduler } = {}
  /** Containers of other nodes changed: the reconciler says so to the routers (the proxy). */
  const containersChanged = (services: string[]): void => { orchestration.containersChanged(services) }
  const channel = new LeaderChannel({
    registry,
    log: ctx.log,
    requireAgent: leadingOrRefuse(cluster, deps.tokens.requireRole('agent')),
    cluster: config.name,
    heartbeatIntervalMs: intervalMs,
    traffic: orchestration.traffic,
    desiredFor: node => late.scheduler?.desiredFor(node),
    heartbeatSeen: () => { heartbeats.inc() },
    changed: (node, what) => {
      containersChanged([...new Set((late.scheduler?.replicasOn(node.name) ?? []).map(r => r.service))])
      if (what === 'joined' && late.scheduler?.hasUnplaced(orchestration.specs()) === true) reschedule('node joined')
    }
  })
  const published = cluster.control === undefined ? undefined : new PublishedContainers(cluster.leaderState.db<RemoteContainer[]>('containers'), cluster.leaderState.db<number>('published'), cluster.state.db<number>('published'))
  const scheduler = late.scheduler = new ClusterScheduler({
    registry,
    channel,
    db: deps.cluster.leaderState.db<Record<string, string>>('assignment'),
    store: deps.cluster.leaderState,
    leading,
    ...(published !== undefined && { published: () => published.all() }),
    leaderName: () => orchestration.nodeName,
    resolveEnv: spec => deps.secrets.resolve(spec.env, spec.name, spec.project),
    specs: () => orchestration.specs(),
    deployTimeoutMs: config.deploy_timeout_secs * 1000,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    log: ctx.log
  })
  orchestration.useScheduler(scheduler)
  cluster.onLeadership(isLeading => {
    if (!isLeading) {
      channel.close('this master no longer leads')
      return
    }
    registry.reload()
    scheduler.reload()
    void ctx.track(takeOver()).catch((err: unknown) => { ctx.log.error({ err }, 'taking the node registry over failed') })
  })

  let rescheduling: Promise<unknown> | undefined
  let again = false
  /** Place every service again, one run at a time (a trigger during a run makes one more run after it). */
  function reschedule (trigger: string): void {
    reschedules.labels(trigger).inc()
    if (rescheduling !== undefined) {
      again = true
      return
    }
    rescheduling = ctx.track((async () => {
      do {
        again = false
        const result = await orchestration.reschedule(trigger).catch((err: unknown) => {
          ctx.log.error({ err, trigger }, 'reschedule failed')
          return undefined
        })
        if (result !== undefined && result.errors.length > 0) ctx.log.warn({ trigger, errors: result.errors }, 'reschedule left errors')
      } while (again && !ctx.stopping.aborted)
    })().finally(() => { rescheduling = undefined }))
  }

  // The leader's own heartbeat: its engine asked once per interval (at most once a second).
  const beat = async (): Promise<void> => {
    if (!leading()) return
    registry.heartbeat(leaderId, { type: 'heartbeat', seq: 0, engine: await engineReport(orchestration, Math.min(intervalMs, 5000)) })
  }
  // Masters on etcd: what agents run, published by the leader at every check and rollout step, followed by the others' proxies.
  const masters = cluster.control === undefined || published === undefined
    ? undefined
    : new Masters({ control: cluster.control, published, remote: () => scheduler.remoteContainers(), leading, changed: containersChanged, log: ctx.log })
  if (masters !== undefined) {
    ctx.onClose(orchestration.traffic.add(masters.traffic()))
    ctx.schedule.every('follow-leader', FOLLOW_INTERVAL_MS, async () => {
      await masters.follow().catch((err: unknown) => { ctx.log.debug({ err: messageOf(err) }, 'the leader\'s publication not followed: tried again') })
    })
  }
  const check = async (): Promise<void> => {
    if (!leading()) return
    void masters?.publish().catch((err: unknown) => { ctx.log.debug({ err: messageOf(err) }, 'agents\' containers not published: tried again at the next check') })
    registry.tick()
    const { changed, expired } = registry.events()
    for (const { node, from, to } of changed) {
      ctx.log[to === 'ready' ? 'info' : 'warn']({ node: node.name, from, to }, `node ${node.name} is ${to}`)
      const replicas = scheduler.replicasOn(node.name)
      containersChanged([...new Set(replicas.map(r => r.service))])
      if (to === 'offline') {
        const why = node.connected ? `no heartbeat for ${config.offline_after_secs} s` : 'its channel closed'
        ctx.events.emit('operator.alert', {
          kind: 'node.offline',
          subject: node.name,
          message: `node ${node.name} is offline (${why}): the ${replicas.length} ${replicas.length === 1 ? 'replica' : 'replicas'} placed on it wait ${config.reschedule_after_secs} s for it, then move to other nodes (those pinned to it keep waiting)`,
          at: Date.now(),
          details: { node: node.id, from, replicas: replicas.length }
        })
      }
    }
    const counts = { ready: 0, unhealthy: 0, offline: 0 }
    for (const node of registry.all()) counts[node.state]++
    for (const [state, count] of Object.entries(counts)) nodesGauge.labels(state).set(count)
    const moving = expired.filter(node => scheduler.replicasOn(node.name).length > 0)
    if (moving.length > 0) {
      ctx.log.warn({ nodes: moving.map(n => n.name) }, `unavailable for ${config.reschedule_after_secs} s: their replicas are placed elsewhere`)
      reschedule('grace period')
    }
  }
  ctx.schedule.every('leader-heartbeat', Math.max(1000, intervalMs), beat)
  ctx.schedule.every('nodes', Math.max(100, Math.min(1000, Math.round(intervalMs / 2))), check)
  ctx.report({ role: 'leader' })

  const info = async (): Promise<ClusterInfo> => {
    registry.tick()
    const specs = new Map(orchestration.specs().map(s => [s.name, s]))
    const local = await orchestration.localContainers().catch(() => [])
    const remote = scheduler.remoteContainers()
    const runs = new Set([...local.filter(c => c.running && c.canary !== true).map(c => `${orchestration.nodeName}/${c.service}/${c.replica}`), ...remote.filter(c => c.running).map(c => `${c.node}/${c.service}/${c.replica}`)])
    return {
      cluster: {
        ...(config.name !== '' && { name: config.name }),
        ...(deps.instance !== undefined && { instance: deps.instance }),
        leader: orchestration.nodeName,
        heartbeat_interval_secs: config.heartbeat_interval_secs,
        offline_after_secs: config.offline_after_secs,
        reschedule_after_secs: config.reschedule_after_secs
      },
      nodes: registry.all().map(node => nodeRecord(node, scheduler.assignment, specs, (service, replica) => runs.has(`${node.name}/${service}/${replica}`))),
      ...(cluster.control !== undefined && { control_plane: await cluster.control.describe().catch((err: unknown) => ({ error: `etcd cannot be asked: ${messageOf(err)}` })) })
    }
  }

  const setDrained = async (idOrName: string, drained: boolean, force = false): Promise<{ node: NodeRecord, moved: Array<{ service: string, replica: number, to: string }>, unplaced: Array<{ service: string, replica: number }> }> => {
    const node = registry.find(idOrName)
    const stranded = drained && !force ? scheduler.strandedByDrain(node.name) : []
    if (stranded.length > 0) {
      throw new Conflict(`draining node "${node.name}" would stop ${stranded.length} ${stranded.length === 1 ? 'replica' : 'replicas'} that no other node can take (pinned to it, or no other node ready with room): ${describeReplicas(stranded)}; add a node, or drain with --force (?force=true) to stop them`, { code: NODES_CODES.DRAIN_WOULD_STRAND })
    }
    const before = scheduler.replicasOn(node.name)
    await registry.setDrained(node.id, drained)
    await orchestration.reschedule(drained ? 'drain' : 'undrain')
    const assignment = scheduler.assignment
    const moved = before.flatMap(({ service, replica }) => {
      const to = assignment.get(service)?.get(replica)
      return to !== undefined && to !== node.name ? [{ service, replica, to }] : []
    })
    const unplaced = before.filter(({ service, replica }) => assignment.get(service)?.get(replica) === undefined)
    const record = (await info()).nodes.find(n => n.id === node.id) as NodeRecord
    return { node: record, moved, unplaced }
  }

  orchestration.answerClusterInfo(info)
  ctx.http('control', channel.routes(), { prefix: '/api/v1', websocket: { preClose: () => { channel.close() } } })
  ctx.http('control', leaderRoutes(deps.cluster, clusterRoutes({ tokens: deps.tokens, setDrained, forget: async idOrName => {
    const node = registry.find(idOrName)
    if (node.role === 'leader') throw new Conflict('the leader cannot be forgotten', { code: NODES_CODES.NODE_NOT_OFFLINE })
    registry.tick()
    if (node.state !== 'offline') throw new Conflict(`node "${node.name}" is ${node.state}: stop it first (only an offline node can be forgotten)`, { code: NODES_CODES.NODE_NOT_OFFLINE })
    channel.disconnect(node.id, 'forgotten')
    await registry.forget(node.id)
    await orchestration.reschedule('forget')
    return { forgotten: node.id, name: node.name }
  } })), { prefix: '/api/v1' })

  return {
    role: 'leader',
    registry,
    scheduler,
    info,
    start: async () => {
      if (cluster.control !== undefined) return
      await registry.registerLeader({ id: leaderId, name: orchestration.nodeName, address: ctx.address('control').href.replace(/\/$/, ''), version: deps.version }, await engineReport(orchestration, 5000))
    },
    stop: async () => { channel.close() }
  }
}

/** The agents' guard, behind a refusal while this master does not lead (the agent tries another master). */
function leadingOrRefuse (cluster: ClusterService, guard: onRequestAsyncHookHandler): onRequestAsyncHookHandler {
  return async function (request, reply) {
    if (!cluster.isLeader()) {
      const leader = cluster.control?.leadership.leader()
      throw new Unavailable(`this master does not lead${leader === undefined ? ' (an election is under way)' : `: join the leader ${leader.name} at ${leader.address}`}`, { code: CLUSTER_CODES.NO_LEADER })
    }
    await guard.call(this, request, reply)
  }
}

/** `web (replicas 1, 2), cache (replica 1)`. */
function describeReplicas (replicas: ReadonlyArray<{ service: string, replica: number }>): string {
  const byService = new Map<string, number[]>()
  for (const { service, replica } of replicas) byService.set(service, [...(byService.get(service) ?? []), replica])
  return [...byService].sort(([a], [b]) => a.localeCompare(b))
    .map(([service, list]) => `${service} (${list.length === 1 ? 'replica' : 'replicas'} ${list.sort((a, b) => a - b).join(', ')})`).join(', ')
}

interface RouteDeps {
  tokens: TokenService
  setDrained(idOrName: string, drained: boolean, force?: boolean): Promise<unknown>
  forget(idOrName: string): Promise<unknown>
}

/** Drain, undrain and forget, under /api/v1 (cluster info is the reconciler's route, answered by this plugin on a leader). */
function clusterRoutes ({ tokens, setDrained, forget }: RouteDeps): FastifyPluginAsync {
  // A node holds every project's replicas: a token limited to projects may not drain it.
  const everyProject = async (request: FastifyRequest): Promise<void> => {
    const projects = tokens.projects(request)
    if (projects !== undefined) throw new Forbidden(`draining a node acts on every project; this token is limited to ${projects.join(', ')}`, { code: TOKENS_CODES.PROJECT_SCOPE })
  }
  const deployer = { onRequest: [tokens.requireRole('deployer'), everyProject] }
  return async app => {
    app.post<{ Params: { id: string }, Querystring: { force?: string } }>('/cluster/nodes/:id/drain', deployer, async request => {
      const { force } = request.query
      if (force !== undefined && force !== 'true' && force !== 'false') throw new BadRequest(`force must be true or false, got ${JSON.stringify(force.slice(0, 20))}`)
      return await setDrained(request.params.id, true, force === 'true')
    })
    app.post<{ Params: { id: string } }>('/cluster/nodes/:id/undrain', deployer, async request => await setDrained(request.params.id, false))
    app.delete<{ Params: { id: string } }>('/cluster/nodes/:id', { onRequest: tokens.requireRole('admin') }, async request => await forget(request.params.id))
  }
}
