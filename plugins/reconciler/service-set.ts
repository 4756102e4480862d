// Rules over a whole set of services: unique names, known and acyclic depends_on, one owner per
// domain and per host port; and the boot order (layers: each service after everything it depends on).
import { claimedRoutes, type ServiceSpec } from './spec.js'

/** A service with where it was declared ("services/web/service.toml", "request body" or "the leader"). */
export interface Declared {
  spec: ServiceSpec
  source: string
}

/** The source of a service declared in a deploy request's body. */
export const REQUEST_SOURCE = 'request body'
/** The source of a service an agent runs because its leader sent it. */
export const LEADER_SOURCE = 'the leader'

/** Where a service came from: a service file, a deploy request (the API: `db create`, `POST /deploy` with a body), or an agent's leader. */
export type Origin = 'file' | 'request' | 'leader'

export function originOf (source: string): Origin {
  return source === REQUEST_SOURCE ? 'request' : source === LEADER_SOURCE ? 'leader' : 'file'
}

function where (d: Declared): string {
  return `${d.source}: service "${d.spec.name}"`
}

/** Every problem of the set, each naming the file, the service and the field. */
export function setProblems (services: readonly Declared[]): string[] {
  const problems: string[] = []
  const byName = new Map<string, Declared>()
  const domains = new Map<string, Declared>()
  const hostPorts = new Map<number, Declared>()
  for (const d of services) {
    const first = byName.get(d.spec.name)
    if (first !== undefined) {
      problems.push(`${where(d)}: name is already used by the service declared in ${first.source}`)
      continue
    }
    byName.set(d.spec.name, d)
    for (const name of claimedRoutes(d.spec)) {
      const owner = domains.get(name)
      if (owner !== undefined) problems.push(`${where(d)}: ${name.includes('/') ? 'route' : 'domain'} "${name}" is already claimed by service "${owner.spec.name}" (${owner.source})`)
      else domains.set(name, d)
    }
    for (const { host, container } of d.spec.extra_ports) {
      const owner = hostPorts.get(host)
      if (owner !== undefined) problems.push(`${where(d)}: extra_ports "${host}:${container}": host port ${host} is already claimed by service "${owner.spec.name}" (${owner.source})`)
      else hostPorts.set(host, d)
    }
  }
  for (const d of byName.values()) {
    for (const dependency of d.spec.depends_on) {
      if (!byName.has(dependency)) problems.push(`${where(d)}: depends_on names unknown service "${dependency}"`)
    }
  }
  const cycle = findCycle([...byName.values()].map(d => d.spec))
  if (cycle !== undefined) problems.push(`${where(byName.get(cycle[0]) as Declared)}: depends_on cycle: ${cycle.join(' → ')}`)
  return problems
}

function findCycle (specs: readonly ServiceSpec[]): string[] | undefined {
  const byName = new Map(specs.map(s => [s.name, s]))
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string, path: string[]): string[] | undefined => {
    if (state.get(name) === 'done' || !byName.has(name)) return undefined
    if (state.get(name) === 'visiting') return [...path.slice(path.indexOf(name)), name]
    state.set(name, 'visiting')
    for (const dependency of byName.get(name)?.depends_on ?? []) {
      const cycle = visit(dependency, [...path, name])
      if (cycle !== undefined) return cycle
    }
    state.set(name, 'done')
    return undefined
  }
  for (const spec of specs) {
    const cycle = visit(spec.name, [])
    if (cycle !== undefined) return cycle
  }
  return undefined
}

/**
 * Boot order: layer 0 holds services depending on nothing in `specs`, layer n those whose
 * dependencies are all in earlier layers. Dependencies outside `specs` are taken as already there.
 * The set must be acyclic (setProblems checks that).
 */
export function bootLayers<T extends { name: string, depends_on: readonly string[] }> (specs: readonly T[]): T[][] {
  const names = new Set(specs.map(s => s.name))
  const placed = new Set<string>()
  const layers: T[][] = []
  let remaining = [...specs]
  while (remaining.length > 0) {
    const layer = remaining.filter(s => s.depends_on.every(d => placed.has(d) || !names.has(d)))
    if (layer.length === 0) throw new Error(`depends_on cycle among ${remaining.map(s => s.name).join(', ')}`)
    for (const s of layer) placed.add(s.name)
    layers.push(layer)
    remaining = remaining.filter(s => !placed.has(s.name))
  }
  return layers
}
