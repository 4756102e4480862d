// The channel between the leader and its agents: JSON messages over one WebSocket per agent, opened by
// the agent at GET /api/v1/cluster/join with its agent token. Version 1; its messages are in plugins/nodes/README.md, The channel.
import type { ContainerState, ServiceSpec } from '../reconciler/api.js'

export const PROTOCOL_VERSION = 1
export const JOIN_PATH = '/api/v1/cluster/join'

/** WebSocket close codes the leader uses (4000–4999 are the application's). */
export const CLOSE = {
  /** A message that is not valid JSON of a known shape, or `hello` missing or late. */
  protocol: 4000,
  /** Another node holds this name. */
  nameTaken: 4009,
  /** The agent speaks another protocol version. */
  version: 4010,
  /** The node was forgotten (DELETE /cluster/nodes/{id}) or replaced by a newer connection of the same id. */
  replaced: 4011,
  /** The leader is stopping: reconnect later. */
  leaving: 1001
} as const

/** What an agent says of its container engine, in hello and in every heartbeat. */
export interface EngineReport {
  /** The engine answered its info call in time. */
  healthy: boolean
  /** Why not, when it did not. */
  error?: string
  kind?: string
  version?: string
  containers_running?: number
  cpus?: number
  memory_bytes?: number
}

/** A replica an agent runs: the reconciler's container state, its address as the leader reaches it. */
export type ReportedContainer = Omit<ContainerState, 'node'>

export interface DeploySummary {
  deployed: string[]
  errors: Array<{ service: string, project: string, error: string }>
  changed: string[]
  removed: string[]
}

// Agent → leader

export interface HelloMessage {
  type: 'hello'
  protocol: number
  /** The agent's node id, made on its first boot and kept. */
  id: string
  name: string
  version: string
  /** Where the leader reaches its replicas ([cluster].advertise_address); absent: the address its channel comes from. */
  address?: string
  engine: EngineReport
  containers: ReportedContainer[]
}

export interface HeartbeatMessage {
  type: 'heartbeat'
  seq: number
  engine: EngineReport
  /** Present when the containers changed since the last report. */
  containers?: ReportedContainer[]
}

export interface AppliedMessage {
  type: 'applied'
  generation: number
  result: DeploySummary
  containers: ReportedContainer[]
}

export interface ReplyMessage {
  type: 'reply'
  id: number
  ok: boolean
  result?: unknown
  error?: string
}

/**
 * A rollout on the agent asks the leader's proxy: take this container out of rotation before it stops
 * (`drain`), or say when this new container serves (`ready`); answered by `traffic-done` with the same id.
 */
export interface TrafficMessage {
  type: 'traffic'
  id: number
  op: 'drain' | 'ready'
  container: ReportedContainer
  /** The spec the new container runs (`ready`). */
  spec?: ServiceSpec
}

export type AgentMessage = HelloMessage | HeartbeatMessage | AppliedMessage | ReplyMessage | TrafficMessage

// Leader → agent

export interface WelcomeMessage {
  type: 'welcome'
  protocol: number
  node: { id: string, name: string }
  cluster: string
  heartbeat_interval_ms: number
}

/** A service as an agent runs it: the spec, the replica indices placed on that agent, the resolved environment. */
export interface AssignedService {
  spec: ServiceSpec
  replicas: number[]
  /** The environment with secret references resolved by the leader: kept in memory on the agent, never stored. */
  env: Record<string, string>
}

export interface DesiredMessage {
  type: 'desired'
  generation: number
  /** Every service with replicas on this agent; any other service the agent runs is removed. */
  services: AssignedService[]
  /** Services whose replicas are recreated even when unchanged (a redeploy). */
  force: string[]
  /** How images are pulled: by the rules, always (redeploy, reload), or only when missing. */
  pull: 'rules' | 'always' | 'missing'
}

/** An operation on the agent's own containers, answered by a reply with the same id. */
export interface RequestMessage {
  type: 'request'
  id: number
  op: 'restart' | 'stop' | 'logs'
  service?: string
  tail?: number
}

export interface TrafficDoneMessage {
  type: 'traffic-done'
  id: number
  ok: boolean
  error?: string
}

export type LeaderMessage = WelcomeMessage | DesiredMessage | RequestMessage | TrafficDoneMessage

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isEngine (value: unknown): value is EngineReport {
  return isObject(value) && typeof value.healthy === 'boolean'
}

function isContainerList (value: unknown): value is ReportedContainer[] {
  return Array.isArray(value) && value.every(c => isObject(c) && typeof c.id === 'string' && typeof c.service === 'string' &&
    typeof c.replica === 'number' && typeof c.running === 'boolean')
}

/** A message's JSON object, or the reason the text is none. */
function jsonObject (text: string): { value: Record<string, unknown> } | { invalid: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { invalid: 'not JSON' }
  }
  return isObject(value) ? { value } : { invalid: 'not a JSON object' }
}

/** An agent's message, or a reason it is not one. */
export function parseAgentMessage (text: string): AgentMessage | { invalid: string } {
  const parsed = jsonObject(text)
  if ('invalid' in parsed) return parsed
  const value = parsed.value
  switch (value.type) {
    case 'hello':
      if (typeof value.protocol !== 'number' || typeof value.id !== 'string' || !/^[0-9a-f]{16}$/.test(value.id) ||
        typeof value.name !== 'string' || typeof value.version !== 'string' || !isEngine(value.engine) || !isContainerList(value.containers)) {
        return { invalid: 'hello needs protocol, id (16 hex digits), name, version, engine and containers' }
      }
      return value as unknown as HelloMessage
    case 'heartbeat':
      if (typeof value.seq !== 'number' || !isEngine(value.engine) || (value.containers !== undefined && !isContainerList(value.containers))) {
        return { invalid: 'heartbeat needs seq and engine' }
      }
      return value as unknown as HeartbeatMessage
    case 'applied':
      if (typeof value.generation !== 'number' || !isObject(value.result) || !isContainerList(value.containers)) {
        return { invalid: 'applied needs generation, result and containers' }
      }
      return value as unknown as AppliedMessage
    case 'reply':
      if (typeof value.id !== 'number' || typeof value.ok !== 'boolean') return { invalid: 'reply needs id and ok' }
      return value as unknown as ReplyMessage
    case 'traffic':
      if (typeof value.id !== 'number' || (value.op !== 'drain' && value.op !== 'ready') || !isContainerList([value.container])) return { invalid: 'traffic needs id, op (drain or ready) and container' }
      return value as unknown as TrafficMessage
    default:
      return { invalid: `unknown message type ${JSON.stringify(value.type)}` }
  }
}

/** A leader's message, or a reason it is not one. */
export function parseLeaderMessage (text: string): LeaderMessage | { invalid: string } {
  const parsed = jsonObject(text)
  if ('invalid' in parsed) return parsed
  const value = parsed.value
  switch (value.type) {
    case 'welcome':
      if (typeof value.protocol !== 'number' || !isObject(value.node) || typeof value.heartbeat_interval_ms !== 'number') return { invalid: 'bad welcome' }
      return value as unknown as WelcomeMessage
    case 'desired':
      if (typeof value.generation !== 'number' || !Array.isArray(value.services) || !Array.isArray(value.force)) return { invalid: 'bad desired' }
      return value as unknown as DesiredMessage
    case 'request':
      if (typeof value.id !== 'number' || typeof value.op !== 'string') return { invalid: 'bad request' }
      return value as unknown as RequestMessage
    case 'traffic-done':
      if (typeof value.id !== 'number' || typeof value.ok !== 'boolean') return { invalid: 'bad traffic-done' }
      return value as unknown as TrafficDoneMessage
    default:
      return { invalid: `unknown message type ${JSON.stringify(value.type)}` }
  }
}
