// The content hash of a service's container configuration: what, when it changes, needs new
// containers. Replicas, depends_on, domain, health, liveness, backup, internal and placement are left
// out (they change no container). Secret references are hashed, never their values.
import { createHash } from 'node:crypto'
import type { ServiceSpec } from './spec.js'

/** Server settings that shape every container (a change recreates them all). */
export interface ContainerSettings {
  publish_address: string
  network: string
}

/** Deterministic JSON: object keys sorted at every level. */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export function specHash (spec: ServiceSpec, settings: ContainerSettings): string {
  const { name, project, image, runtime, command, port, env, volumes, mounts, extra_ports: extraPorts, resources, healthcheck } = spec
  const container = { name, project, image, runtime, command, port, env, volumes, mounts, extra_ports: extraPorts, resources, healthcheck }
  return createHash('sha256').update(canonical({ v: 1, container, settings })).digest('hex')
}
