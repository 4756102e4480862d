// The desired specification of one service, as read from a `[[service]]` table of a service.toml or
// from an entry of a deploy request: every field checked, defaults filled in, problems named by field.
import { isAbsolute, resolve } from 'node:path'
import { Cron } from 'croner'
import { SECRET_NAME, secretReferences } from '../secrets/api.js'
import { Fields, type Table } from './fields.js'
import { readMiddleware, readPathPrefix, type MiddlewareSpec } from './route-spec.js'
import { parseMemory } from './units.js'

export interface PortMapping {
  host: number
  container: number
}

export interface LivenessSpec {
  path: string
  interval_secs: number
  timeout_secs: number
  failure_threshold: number
  initial_delay_secs: number
}

export interface HealthcheckSpec {
  /** Run with `/bin/sh -c`; exit 0 means healthy. */
  command: string
  interval_secs: number
  timeout_secs: number
  retries: number
  start_period_secs: number
}

/** An image built through the engine from a directory (`[service.build]`), or from a git repository's commit. */
export interface BuildSpec {
  /** Absolute: given relative to the service file's folder (a request's: the server's working directory); with `git`, a folder of the repository. */
  context: string
  /** A repository (URL or path git fetches from) the sources come from, at the newest commit of `ref` or the one a webhook names. */
  git?: string
  /** With `git`: the branch or tag built when no commit is named (`HEAD`: the repository's default branch). */
  ref?: string
  /** With `git`: the commit this build was made from (recorded at the deploy, never read from a file). */
  commit?: string
  /** Relative to the context. */
  dockerfile: string
  args: Record<string, string>
}

/** A command run on a schedule as a one-off container of the service (`[[service.jobs]]`). */
export interface JobSpec {
  name: string
  /** Six fields: second minute hour day-of-month month day-of-week. */
  schedule: string
  command: string[]
}

export interface ServiceSpec {
  name: string
  project: string
  image: string
  runtime: string
  command?: string[]
  domain?: string
  /** More names it is served at (besides `domain`); the first of `domain` and these is its primary name. */
  domains?: string[]
  /** Names whose requests are redirected (308) to the primary name (`www.example.com` → `example.com`). */
  aliases?: string[]
  port?: number
  /** Served under this path prefix of its names (`/api`: `/api` and `/api/…`); the longest prefix of a name wins. */
  path_prefix?: string
  /** `true` (the only value kept): the prefix is taken off the path before the request reaches a replica. */
  strip_prefix?: true
  /** Route middleware the proxy applies to the service's requests (`[service.middleware]`). */
  middleware?: MiddlewareSpec
  replicas: number
  health?: string
  depends_on: string[]
  extra_ports: PortMapping[]
  /** Values may hold `${secrets.NAME}` references; they are resolved only when a container is created. */
  env: Record<string, string>
  volumes: Array<{ source: string, target: string }>
  /** Bind mounts; `source` is absolute (relative paths were resolved against the server's working directory). */
  mounts: Array<{ source: string, target: string, read_only: boolean }>
  liveness?: LivenessSpec
  /** A command the engine runs in the container to tell its health (Docker's HEALTHCHECK). */
  healthcheck?: HealthcheckSpec
  backup?: { pre_hook: string }
  resources?: { memory?: string, cpu?: number }
  internal: boolean
  placement?: { node: string }
  /** `false` (the only value kept; absent means true): a rollout that fails leaves its replicas as they are instead of rolling them back. */
  rollback_on_failure?: false
  /** When the image is pulled: always, only when absent, or never (absent: the server's rules, by trigger). */
  pull?: ServicePull
  /** Replicas a rollout replaces at once (absent: one at a time). */
  max_parallel?: number
  jobs?: JobSpec[]
  /** Built through the engine; `image` is then the repository its builds are tagged in (tag: the content hash, once deployed). */
  build?: BuildSpec
}

const DEFAULT_RUNTIME = 'docker'
/** A service's own pull policy (`pull`). */
export type ServicePull = 'always' | 'missing' | 'never'
const SERVICE_PULL = /^(always|missing|never)$/
const LIVENESS_DEFAULTS = { interval_secs: 10, timeout_secs: 2, failure_threshold: 3, initial_delay_secs: 0 } as const

/** DNS label: service and project names become container names and network aliases. */
export const NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const NAME_HINT = 'lowercase letters, digits and dashes (a DNS label, at most 63)'
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
/** An image reference as a service file may give it (name, tag, digest). */
export const IMAGE = /^[a-z0-9][a-z0-9._\-/:@]*$/i
const HTTP_PATH = /^\/[^\s]*$/
const ABSOLUTE_PATH = /^\/[^\0]*$/
const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const PORT_MAPPING = /^(\d{1,5}):(\d{1,5})$/

export interface ParseContext {
  /** Project when the table names none (the folder name, for files). */
  project?: string
  /** Directory relative mount sources resolve against. */
  cwd: string
  /** The service file's folder, which a relative build context is read against (else `cwd`). */
  dir?: string
  /** Runtime names the server knows. */
  runtimes: readonly string[]
  /** Receives each problem, already worded "<field> <reason>". */
  problem: (message: string) => void
}

function portMapping (text: string): PortMapping | undefined {
  const match = PORT_MAPPING.exec(text)
  if (match === null) return undefined
  const [host, container] = [Number(match[1]), Number(match[2])]
  return host >= 1 && host <= 65535 && container >= 1 && container <= 65535 ? { host, container } : undefined
}

function readEnv (fields: Fields, table: Table | undefined): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(table ?? {})) {
    if (!ENV_NAME.test(key)) {
      fields.fail(`env.${key}`, 'is not a valid variable name (letters, digits, underscores)')
    } else if (typeof value !== 'string') {
      fields.fail(`env.${key}`, `must be a string, got ${JSON.stringify(value)}`)
    } else {
      for (const name of secretReferences(value)) {
        if (!SECRET_NAME.test(name)) fields.fail(`env.${key}`, `refers to an invalid secret name ${JSON.stringify(name)}`)
      }
      env[key] = value
    }
  }
  return env
}

function readLiveness (fields: Fields | undefined, health: string | undefined): LivenessSpec | undefined {
  if (fields === undefined) return undefined
  const path = fields.string('path', { pattern: HTTP_PATH, hint: 'an HTTP path starting with /' }) ?? health
  const liveness = {
    interval_secs: fields.integer('interval_secs', { min: 1 }) ?? LIVENESS_DEFAULTS.interval_secs,
    timeout_secs: fields.integer('timeout_secs', { min: 1 }) ?? LIVENESS_DEFAULTS.timeout_secs,
    failure_threshold: fields.integer('failure_threshold', { min: 1 }) ?? LIVENESS_DEFAULTS.failure_threshold,
    initial_delay_secs: fields.integer('initial_delay_secs', { min: 0 }) ?? LIVENESS_DEFAULTS.initial_delay_secs
  }
  fields.finish()
  if (path === undefined) return fields.has('path') ? undefined : fields.fail('path', 'is required (or set the service\'s health path)')
  return { path, ...liveness }
}

function readHealthcheck (fields: Fields | undefined): HealthcheckSpec | undefined {
  if (fields === undefined) return undefined
  const command = fields.string('command', { required: true })
  const healthcheck = {
    interval_secs: fields.integer('interval_secs', { min: 1 }) ?? 10,
    timeout_secs: fields.integer('timeout_secs', { min: 1 }) ?? 5,
    retries: fields.integer('retries', { min: 1 }) ?? 3,
    start_period_secs: fields.integer('start_period_secs', { min: 0 }) ?? 0
  }
  fields.finish()
  return command === undefined ? undefined : { command, ...healthcheck }
}

const CONTAINER_PATH = { required: true, pattern: ABSOLUTE_PATH, hint: 'an absolute path in the container' }

function readVolumes (fields: Fields): ServiceSpec['volumes'] {
  return (fields.tables('volumes') ?? []).map(v => {
    const source = v.string('source', { required: true, pattern: VOLUME_NAME, hint: 'a volume name (letters, digits, _ . -)' })
    const target = v.string('target', CONTAINER_PATH)
    v.finish()
    return { source: source ?? '', target: target ?? '' }
  })
}

function readMounts (fields: Fields, cwd: string): ServiceSpec['mounts'] {
  return (fields.tables('mounts') ?? []).map(m => {
    const source = m.string('source', { required: true }) ?? ''
    const target = m.string('target', CONTAINER_PATH) ?? ''
    const readOnly = m.boolean('read_only') ?? false
    m.finish()
    return { source: isAbsolute(source) ? source : resolve(cwd, source), target, read_only: readOnly }
  })
}

function readResources (fields: Fields): ServiceSpec['resources'] {
  const table = fields.table('resources')
  if (table === undefined) return undefined
  const memory = table.string('memory')
  if (memory !== undefined && parseMemory(memory) === undefined) table.fail('memory', `must be a size with a unit such as "512m" or "1g", got ${JSON.stringify(memory)}`)
  const cpu = table.number('cpu', { above: 0 })
  table.finish()
  return { ...(memory !== undefined && { memory }), ...(cpu !== undefined && { cpu }) }
}

/** The repository a service's builds are tagged in: its `image` without a tag, else `berth-build/<project>-<name>`. */
export function buildRepository (image: string | undefined, project: string, name: string): string {
  if (image === undefined) return `berth-build/${project}-${name}`
  const slash = image.lastIndexOf('/')
  const colon = image.indexOf(':', slash + 1)
  return (colon === -1 ? image : image.slice(0, colon)).replace(/@.*$/, '')
}

/** Every name a service claims: those it is served at (`domain`, then `domains`), then its aliases. */
export function claimedNames (spec: Pick<ServiceSpec, 'domain' | 'domains' | 'aliases'>): string[] {
  return [...new Set([...(spec.domain === undefined ? [] : [spec.domain]), ...(spec.domains ?? []), ...(spec.aliases ?? [])])]
}

/** What a service claims of each of its names: the whole name, or its path prefix there (`example.com/api`). */
export function claimedRoutes (spec: Pick<ServiceSpec, 'domain' | 'domains' | 'aliases' | 'path_prefix'>): string[] {
  return claimedNames(spec).map(name => `${name}${spec.path_prefix ?? ''}`)
}

function readBuild (fields: Fields, base: string): BuildSpec | undefined {
  const table = fields.table('build')
  if (table === undefined) return undefined
  const context = table.string('context') ?? '.'
  const git = table.string('git', { pattern: /^[^-\s]\S*$/, hint: 'a repository URL or path' })
  const ref = table.string('ref', { pattern: /^[^-\s][^\s:~^?*[\\]*$/, hint: 'a branch or tag name' })
  if (ref !== undefined && git === undefined && !table.has('git')) table.fail('ref', 'needs git, the repository it names a branch or tag of')
  const dockerfile = table.string('dockerfile') ?? 'Dockerfile'
  const args: Record<string, string> = {}
  for (const [key, value] of Object.entries(table.map('args') ?? {})) {
    if (!ENV_NAME.test(key)) table.fail(`args.${key}`, 'is not a valid argument name (letters, digits, underscores)')
    else if (typeof value !== 'string') table.fail(`args.${key}`, `must be a string, got ${JSON.stringify(value)}`)
    else args[key] = value
  }
  table.finish()
  if (isAbsolute(dockerfile) || dockerfile.split('/').includes('..')) return table.fail('dockerfile', `must be a path inside the context, got ${JSON.stringify(dockerfile)}`)
  if (git === undefined) return { context: isAbsolute(context) ? context : resolve(base, context), dockerfile, args }
  if (isAbsolute(context) || context.split('/').includes('..')) return table.fail('context', `must be a folder inside the repository, got ${JSON.stringify(context)}`)
  return { context, git, ref: ref ?? 'HEAD', dockerfile, args }
}

/** Why a schedule is not six cron fields croner reads, or undefined when it is. */
export function scheduleProblem (schedule: string): string | undefined {
  if (schedule.trim().split(/\s+/).length !== 6) return `must have six fields (second minute hour day-of-month month day-of-week), got ${JSON.stringify(schedule)}`
  try {
    const cron = new Cron(schedule, { paused: true })
    cron.stop()
    return undefined
  } catch (err) {
    return `is not a schedule: ${(err as Error).message.replace(/^CronPattern: /, '')}`
  }
}

function readJobs (fields: Fields): JobSpec[] | undefined {
  const tables = fields.tables('jobs')
  if (tables === undefined) return undefined
  const jobs = tables.map(j => {
    const name = j.string('name', { required: true, pattern: NAME, hint: NAME_HINT })
    const schedule = j.string('schedule', { required: true })
    const command = j.strings('command')
    if (command === undefined || command.length === 0) j.fail('command', 'is required: the command to run, as a list of strings')
    const problem = schedule === undefined ? undefined : scheduleProblem(schedule)
    if (problem !== undefined) j.fail('schedule', problem)
    j.finish()
    return { name: name ?? '', schedule: schedule ?? '', command: command ?? [] }
  })
  const names = jobs.map(j => j.name)
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined) fields.fail('jobs', `names "${twice}" twice`)
  return jobs
}

/** A table holding one required string (`[service.backup] pre_hook`, `[service.placement] node`). */
function readOneString (fields: Fields, table: string, key: string): string | undefined {
  const sub = fields.table(table)
  const value = sub?.string(key, { required: true })
  sub?.finish()
  return value
}

/**
 * Read one service table. Problems go to `context.problem`; the result is undefined when there were
 * any, so a caller can report every problem of every file before refusing.
 */
export function parseService (table: Table, context: ParseContext): ServiceSpec | undefined {
  let failed = false
  const fields = new Fields(table, message => { failed = true; context.problem(message) })
  const name = fields.string('name', { required: true, pattern: NAME, hint: NAME_HINT })
  const project = fields.string('project', { pattern: NAME, hint: NAME_HINT }) ?? context.project
  if (project === undefined) fields.fail('project', 'is required')
  const build = readBuild(fields, context.dir ?? context.cwd)
  const image = fields.string('image', { required: build === undefined && !fields.has('build'), pattern: IMAGE, hint: 'an image reference such as name:tag' })
  const runtime = fields.string('runtime') ?? DEFAULT_RUNTIME
  if (!context.runtimes.includes(runtime)) fields.fail('runtime', `must be one of ${context.runtimes.map(r => JSON.stringify(r)).join(', ')}, got ${JSON.stringify(runtime)}`)
  const command = fields.strings('command')
  if (command?.length === 0) fields.fail('command', 'must not be empty (leave it out to use the image\'s command)')
  const domain = fields.string('domain', { pattern: DOMAIN, hint: 'a lowercase host name' })
  const hostNames = (item: string): string | undefined => DOMAIN.test(item) ? undefined : `must be lowercase host names, got ${JSON.stringify(item)}`
  const domains = fields.strings('domains', hostNames)
  const aliases = fields.strings('aliases', hostNames)
  const port = fields.integer('port', { min: 1, max: 65535 })
  const pathPrefix = readPathPrefix(fields)
  const strip = fields.boolean('strip_prefix')
  const middleware = readMiddleware(fields)
  const replicas = fields.integer('replicas', { min: 0 }) ?? 1
  const health = fields.string('health', { pattern: HTTP_PATH, hint: 'an HTTP path starting with /' })
  const dependsOn = fields.strings('depends_on', item => NAME.test(item) ? undefined : `must be a service name (${NAME_HINT})`) ?? []
  const extraPorts = (fields.strings('extra_ports', item => portMapping(item) === undefined ? `must be "<host_port>:<container_port>" with ports from 1 to 65535, got ${JSON.stringify(item)}` : undefined) ?? [])
    .map(text => portMapping(text) as PortMapping)
  const env = readEnv(fields, fields.map('env'))
  const volumes = readVolumes(fields)
  const mounts = readMounts(fields, context.cwd)
  const liveness = readLiveness(fields.table('liveness'), health)
  const healthcheck = readHealthcheck(fields.table('healthcheck'))
  const preHook = readOneString(fields, 'backup', 'pre_hook')
  const resources = readResources(fields)
  const internal = fields.boolean('internal') ?? false
  const node = readOneString(fields, 'placement', 'node')
  const rollback = fields.boolean('rollback_on_failure')
  const pull = fields.string('pull', { pattern: SERVICE_PULL, hint: '"always", "missing" or "never"' }) as ServicePull | undefined
  const maxParallel = fields.integer('max_parallel', { min: 1 })
  const jobs = readJobs(fields)
  fields.finish()
  if (strip === true && pathPrefix === undefined && !fields.has('path_prefix')) fields.fail('strip_prefix', 'needs a path_prefix to strip')
  for (const field of ['health', 'domain', 'domains', 'aliases', 'liveness', 'path_prefix', 'middleware']) {
    if (fields.has(field) && !fields.has('port')) fields.fail('port', `is required when ${field} is set`)
  }
  const named = [...(domain === undefined ? [] : [domain]), ...(domains ?? [])]
  const both = (aliases ?? []).find(alias => named.includes(alias))
  if (both !== undefined) fields.fail('aliases', `must not hold "${both}", a name the service is served at`)
  if (name !== undefined && dependsOn.includes(name)) fields.fail('depends_on', 'must not name the service itself')
  if (failed) return undefined

  const spec: ServiceSpec = {
    name: name as string, project: project as string, image: build === undefined ? image as string : buildRepository(image, project as string, name as string), runtime, replicas,
    depends_on: dependsOn, extra_ports: extraPorts, env, volumes, mounts, internal
  }
  if (command !== undefined) spec.command = command
  if (domain !== undefined) spec.domain = domain
  if (domains !== undefined && domains.length > 0) spec.domains = [...new Set(domains)]
  if (aliases !== undefined && aliases.length > 0) spec.aliases = [...new Set(aliases)]
  if (port !== undefined) spec.port = port
  if (pathPrefix !== undefined) spec.path_prefix = pathPrefix
  if (pathPrefix !== undefined && strip === true) spec.strip_prefix = true
  if (middleware !== undefined) spec.middleware = middleware
  if (health !== undefined) spec.health = health
  if (liveness !== undefined) spec.liveness = liveness
  if (healthcheck !== undefined) spec.healthcheck = healthcheck
  if (preHook !== undefined) spec.backup = { pre_hook: preHook }
  if (resources !== undefined) spec.resources = resources
  if (node !== undefined) spec.placement = { node }
  if (rollback === false) spec.rollback_on_failure = false
  if (pull !== undefined) spec.pull = pull
  if (maxParallel !== undefined && maxParallel > 1) spec.max_parallel = maxParallel
  if (jobs !== undefined && jobs.length > 0) spec.jobs = jobs
  if (build !== undefined) spec.build = build
  return spec
}
