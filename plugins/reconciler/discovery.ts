// Service declarations: every `services/*/service.toml` under the server's working directory (the
// folder name is the project unless the file sets `project`), or the entries of a deploy request.
// All problems of all files are collected, then refused together.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { parse as parseToml, TomlError } from 'smol-toml'
import { BadRequest, messageOf } from '../../kernel/index.js'
import { isTable, type Table } from './fields.js'
import { REQUEST_SOURCE, setProblems, type Declared } from './service-set.js'
import { NAME, parseService, type ParseContext } from './spec.js'
import { RECONCILER_CODES } from './errors.js'

const SERVICE_FILE = 'service.toml'

/** Declarations that cannot be used; `problems` lists each one, the message joins them. */
export class SpecError extends BadRequest {
  readonly problems: readonly string[]

  constructor (problems: readonly string[]) {
    super(problems.join('; '), { code: RECONCILER_CODES.INVALID_SPEC })
    this.problems = problems
  }
}

export interface DiscoveryOptions {
  cwd: string
  /** Folder holding one sub-folder per project, relative to cwd. */
  servicesDir: string
  runtimes: readonly string[]
}

/** Parse the service tables of one source; problems are prefixed with the source and the service. */
function parseTables (tables: readonly unknown[], source: string, base: Omit<ParseContext, 'problem'>, problems: string[], label: (i: number) => string): Declared[] {
  const declared: Declared[] = []
  tables.forEach((table, i) => {
    const name = isTable(table) && typeof table.name === 'string' ? `service "${table.name}"` : label(i)
    if (!isTable(table)) {
      problems.push(`${source}: ${name}: must be a table`)
      return
    }
    const spec = parseService(table, { ...base, problem: message => problems.push(`${source}: ${name}: ${message}`) })
    if (spec !== undefined) declared.push({ spec, source })
  })
  return declared
}

function readFile (file: string, source: string, options: DiscoveryOptions, project: string, problems: string[]): Declared[] {
  let parsed: Table
  try {
    parsed = parseToml(readFileSync(file, 'utf8')) as Table
  } catch (err) {
    const at = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : ''
    problems.push(`${source}: invalid TOML${at}: ${messageOf(err).split('\n')[0]}`)
    return []
  }
  for (const key of Object.keys(parsed)) {
    if (key !== 'service' && key !== 'project') problems.push(`${source}: ${key} is not a known top-level field (expected [[service]] tables and project)`)
  }
  if (parsed.project !== undefined && (typeof parsed.project !== 'string' || !NAME.test(parsed.project))) {
    problems.push(`${source}: project must be lowercase letters, digits and dashes (a DNS label), got ${JSON.stringify(parsed.project)}`)
    return []
  }
  if (!Array.isArray(parsed.service) || parsed.service.length === 0) {
    problems.push(`${source}: no [[service]] tables`)
    return []
  }
  if (parsed.project === undefined && !NAME.test(project)) {
    problems.push(`${source}: the folder name "${project}" is not a valid project name (lowercase letters, digits, dashes); set project in the file`)
    return []
  }
  const fileProject = (parsed.project as string | undefined) ?? project
  return parseTables(parsed.service, source, { cwd: options.cwd, dir: dirname(file), runtimes: options.runtimes, project: fileProject }, problems, i => `[[service]] #${i + 1}`)
}

/** Every service declared under `<cwd>/<servicesDir>/*\/service.toml`; throws SpecError on any problem. */
export function discoverServices (options: DiscoveryOptions): Declared[] {
  const root = join(options.cwd, options.servicesDir)
  const folders = existsSync(root)
    ? readdirSync(root, { withFileTypes: true }).filter(e => e.isDirectory() && !e.name.startsWith('.')).map(e => e.name).sort()
    : []
  const files = folders.map(folder => ({ folder, file: join(root, folder, SERVICE_FILE) })).filter(f => existsSync(f.file))
  if (files.length === 0) throw new SpecError([`no service files: ${join(root, '*', SERVICE_FILE)} matches nothing`])
  const problems: string[] = []
  const declared = files.flatMap(({ folder, file }) => {
    return readFile(file, relative(options.cwd, file), options, folder, problems)
  })
  problems.push(...setProblems(declared))
  if (problems.length > 0) throw new SpecError(problems)
  return declared
}

/** The `services` array of a deploy request body; throws SpecError on any problem. */
export function parseRequestServices (body: unknown, options: Omit<DiscoveryOptions, 'servicesDir'>): Declared[] {
  const services = isTable(body) ? body.services : undefined
  if (!Array.isArray(services) || services.length === 0) throw new SpecError([`${REQUEST_SOURCE}: services must be a non-empty array of service entries`])
  if (isTable(body)) {
    for (const key of Object.keys(body)) if (key !== 'services') throw new SpecError([`${REQUEST_SOURCE}: ${key} is not a known field`])
  }
  const problems: string[] = []
  const declared = parseTables(services, REQUEST_SOURCE, { cwd: options.cwd, runtimes: options.runtimes }, problems, i => `services[${i}]`)
  if (problems.length > 0) throw new SpecError(problems)
  return declared
}
