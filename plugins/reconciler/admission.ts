// Admission of service specs: what a spec may take of the host, checked before any container of it is
// created, whoever deployed it. Bind mounts and local git sources only under the host folders an
// operator declared (`allowed_host_paths`), never Berth's state, the engine's socket or data, or the
// host's system folders; host ports only in the declared range and never one a Berth listener uses;
// build contexts inside the service file's folder (or, for a request, a declared host folder), with
// symlinks resolved before they are compared; secrets of the service's project or shared with it
// only. Each refusal names the field and the rule.
import { existsSync, realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { secretReferences } from '../secrets/api.js'
import { LEADER_SOURCE, REQUEST_SOURCE } from './service-set.js'
import type { ServiceSpec } from './spec.js'

export interface AdmissionRules {
  /** Absolute host folders (as configured, resolved against the working directory). */
  allowedHostPaths: readonly string[]
  /** Host ports `extra_ports` may publish, inclusive; undefined: none. */
  hostPorts: { first: number, last: number } | undefined
  /** Ports this server's listeners use now. */
  listenerPorts: () => readonly number[]
  /** Host paths no mount or source may be, hold or be inside: the state directory, the engine's socket and data. */
  protectedPaths: readonly string[]
  /** Where relative service-file sources are read from. */
  cwd: string
  /** Whether a project's services may use a secret (theirs or shared with them), another project's only, or none exists. */
  secretVisibility: (name: string, project: string) => 'visible' | 'hidden' | 'missing'
}

/** Host folders nothing is mounted from, whatever `allowed_host_paths` says: they give the host away. */
const SYSTEM_PATHS = ['/', '/proc', '/sys', '/dev', '/boot', '/etc', '/root', '/run', '/var/run', '/var/lib/docker', '/var/lib/containerd']

/** `[reconciler].host_ports`: "first-last", or "" for none. Undefined with a reason when malformed. */
export function parsePortRange (text: string): { first: number, last: number } | undefined | string {
  if (text.trim() === '') return undefined
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text)
  const [first, last] = match === null ? [NaN, NaN] : [Number(match[1]), Number(match[2])]
  if (!(first >= 1 && last <= 65535 && first <= last)) return `host_ports must be "<first>-<last>" with ports from 1 to 65535 (or "" for none), got ${JSON.stringify(text)}`
  return { first, last }
}

/** A path with its symlinks resolved; for one that does not exist yet, its nearest existing folder's, plus the rest. */
export function realPath (path: string): string {
  let existing = resolve(path)
  const rest: string[] = []
  while (!existsSync(existing)) {
    const parent = dirname(existing)
    if (parent === existing) break
    rest.unshift(basename(existing))
    existing = parent
  }
  return join(realpathSync(existing), ...rest)
}

/** Whether `path` is `folder` or inside it (both absolute and resolved). */
export function isInside (path: string, folder: string): boolean {
  const rel = relative(folder, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

export class Admission {
  readonly #rules: AdmissionRules
  readonly #allowed: string[]
  readonly #protected: string[]

  constructor (rules: AdmissionRules) {
    this.#rules = rules
    this.#allowed = rules.allowedHostPaths.map(path => realPath(resolve(rules.cwd, path)))
    // Both spellings of each: as given and with links resolved (/var/run is /run on most hosts).
    const spelled = [...SYSTEM_PATHS, ...rules.protectedPaths].map(path => resolve(path))
    this.#protected = [...new Set([...spelled, ...spelled.map(path => realPath(path))])]
  }

  /**
   * Why a spec may not run, one line per refused field ("mounts[0].source …"); empty when it may.
   * `source` is where it was declared: a service file's path (relative to the working directory), a
   * request body, or an agent's leader.
   */
  problems (spec: ServiceSpec, source: string): string[] {
    const problems: string[] = []
    spec.mounts.forEach((mount, i) => {
      const problem = this.#hostPathProblem(mount.source)
      if (problem !== undefined) problems.push(`mounts[${i}].source ${JSON.stringify(mount.source)} ${problem}`)
    })
    const listening = new Set(this.#rules.listenerPorts())
    const range = this.#rules.hostPorts
    spec.extra_ports.forEach(({ host, container }, i) => {
      const field = `extra_ports[${i}] "${host}:${container}"`
      if (listening.has(host)) problems.push(`${field}: host port ${host} is a Berth listener's`)
      else if (range === undefined) problems.push(`${field}: no host ports may be published ([reconciler].host_ports is empty)`)
      else if (host < range.first || host > range.last) problems.push(`${field}: host port ${host} is outside ${range.first}-${range.last} ([reconciler].host_ports)`)
    })
    for (const [variable, value] of Object.entries(spec.env)) {
      for (const name of secretReferences(value)) {
        if (this.#rules.secretVisibility(name, spec.project) === 'hidden') problems.push(`env.${variable} refers to secret "${name}", which is another project's and not shared with project "${spec.project}"`)
      }
    }
    const build = spec.build
    if (build?.git !== undefined) {
      const problem = this.#gitProblem(build.git)
      if (problem !== undefined) problems.push(`build.git ${JSON.stringify(build.git)} ${problem}`)
    } else if (build !== undefined && source !== LEADER_SOURCE) {
      const problem = this.#contextProblem(build.context, source)
      if (problem !== undefined) problems.push(`build.context ${JSON.stringify(build.context)} ${problem}`)
    }
    return problems
  }

  /** Why a host path may not be mounted or read, or undefined when it may. */
  #hostPathProblem (path: string): string | undefined {
    const real = realPath(path)
    // Every path is inside `/`: the root itself is refused, and (below) whatever holds it.
    const taken = this.#protected.find(p => (p !== '/' && isInside(real, p)) || isInside(p, real))
    if (taken !== undefined) return `is, holds or is inside ${taken}, which no service may reach`
    if (this.#allowed.length === 0) return 'is a host path, and no host paths are allowed ([reconciler].allowed_host_paths is empty; named volumes are)'
    if (!this.#allowed.some(folder => isInside(real, folder))) return `is not inside a folder of [reconciler].allowed_host_paths (${this.#allowed.join(', ')})`
    return undefined
  }

  /** A git source: a network URL, or a local repository under the allowed host folders. */
  #gitProblem (url: string): string | undefined {
    if (/^(https?|ssh|git):\/\//i.test(url) || /^[^/:@\s]+@[^/:\s]+:/.test(url)) return undefined
    if (/^file:\/\//i.test(url)) {
      const path = decodeURIComponent(url.replace(/^file:\/\/(localhost)?/i, ''))
      return this.#hostPathProblem(path)
    }
    if (url.includes('::') || /^[a-z][a-z0-9+.-]*:/i.test(url)) return 'uses a transport Berth does not fetch with (https, http, ssh, git, or a local repository under allowed_host_paths)'
    return this.#hostPathProblem(resolve(this.#rules.cwd, url))
  }

  /** A build from a folder: inside its service file's folder, or (from a request) under an allowed host folder. */
  #contextProblem (context: string, source: string): string | undefined {
    if (source === REQUEST_SOURCE) return this.#hostPathProblem(context)
    const folder = realPath(resolve(this.#rules.cwd, dirname(source)))
    const real = realPath(context)
    return isInside(real, folder) ? undefined : `leaves the service file's folder ${folder}${real === resolve(context) ? '' : ` (through a symlink, to ${real})`}`
  }
}
