// The orchestration commands: deploy (also as a canary), promote, rollback, redeploy, restart, status,
// deploys (the history), logs, exec, jobs and reload, each a call to the control API of the running server, with
// progress lines while it works and exit code 1 on failure; and install-service, which writes the
// systemd unit that runs the server where services/ is.
import { InvalidArgumentError } from 'commander'
import { controlClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import type { CanaryView } from './canary.js'
import type { DeployResult, RollbackResult } from './reconciler.js'
import { addInstallServiceCommand } from './install-service.js'
import type { JobRun, JobStatus } from './jobs.js'
import type { ReloadRecord } from './reload.js'
import type { HistoryEntry } from './state.js'
import { describeCertificate } from './certificate-text.js'
import type { RouteStatus, ServiceStatus } from './status.js'
import { serviceFigures } from './stats-format.js'

/** The proxy's view of a service: replicas in rotation, and its certificate. */
function routeColumns (route: RouteStatus | undefined): string[] {
  return route === undefined ? ['-', '-'] : [`${route.serving} serving`, describeCertificate(route.certificate)]
}

/** Where a service's replicas run, in a cluster: `node-a:1,3 node-b:2` (replica numbers per node). */
function nodesColumn (status: ServiceStatus): string {
  const byNode = new Map<string, number[]>()
  for (const c of status.containers) if (c.node !== undefined && c.canary !== true) byNode.set(c.node, [...(byNode.get(c.node) ?? []), c.replica])
  return [...byNode].map(([node, replicas]) => `${node}:${replicas.sort((a, b) => a - b).join(',')}`).join(' ') || '-'
}

/** While a long call runs, say so every few seconds on stderr. */
const PROGRESS_EVERY_MS = 5000

async function withProgress<T> (what: string, call: () => Promise<T>): Promise<T> {
  const started = Date.now()
  console.error(`${what} …`)
  const timer = setInterval(() => { console.error(`  still ${what.split(' ')[0]} (${Math.round((Date.now() - started) / 1000)} s)`) }, PROGRESS_EVERY_MS)
  try {
    return await call()
  } finally {
    clearInterval(timer)
  }
}

/** One line per service, a summary, and a failure (exit 1) naming the services that failed. */
function report (result: DeployResult): void {
  const failed = new Map(result.errors.map(e => [e.service, e.error]))
  const rows = [
    ...result.deployed.map(name => [name, result.changed.includes(name) ? 'updated' : 'unchanged']),
    ...result.removed.map(name => [name, 'removed']),
    ...(result.kept ?? []).map(name => [name, 'kept: deployed by a request, in no service file (--prune removes it)']),
    ...result.errors.map(e => [e.service, `failed: ${e.error}`])
  ]
  for (const [name, outcome] of rows) console.log(`  ${name.padEnd(Math.max(...rows.map(r => r[0].length)))}  ${outcome}`)
  console.log(`${result.deployed.length} deployed (${result.changed.length} updated), ${result.removed.length} removed, ${failed.size} failed`)
  if (failed.size > 0) {
    const [first, ...others] = result.errors
    throw new Error(`${failed.size} service${failed.size === 1 ? '' : 's'} failed: ${first.service}: ${first.error}${others.length > 0 ? ` (and ${others.map(e => e.service).join(', ')})` : ''}`)
  }
}

function weightOption (value: string): number {
  const weight = Number(value)
  if (!/^\d+$/.test(value) || weight < 1 || weight > 99) throw new InvalidArgumentError('must be a whole percent from 1 to 99')
  return weight
}

/** A canary in a line: its image, the start of its hash, its share of requests. */
function describeCanary (canary: CanaryView): string {
  return `${canary.image} (${canary.hash.slice(0, 12)}) at ${canary.weight}%`
}

/** Services a history row names at most before it says how many more. */
const LISTED_SERVICES = 4

/** A history entry as a table row: every service of it, or (`service` given) that one service's image, hash and outcome. */
function historyRow (entry: HistoryEntry, service: string | undefined): string[] {
  // No token asked for an auto-promotion's promote or rollback: its reason says why (in --json).
  const head = [entry.at.replace(/\.\d+Z$/, 'Z'), entry.trigger, entry.by ?? (entry.reason !== undefined ? 'auto' : '-')]
  if (service !== undefined) {
    const recorded = entry.services.find(s => s.name === service)
    const error = entry.errors.find(e => e.service === service)?.error
    return [...head, recorded?.image ?? '-', recorded?.hash.slice(0, 12) ?? '-', error === undefined ? 'deployed' : `failed: ${error}`]
  }
  const names = entry.services.map(s => s.name)
  const more = names.length > LISTED_SERVICES ? ` +${names.length - LISTED_SERVICES}` : ''
  const failed = entry.errors.map(e => e.service)
  return [...head, `${names.slice(0, LISTED_SERVICES).join(', ')}${more}`, failed.length === 0 ? 'ok' : `${failed.length} failed: ${failed.join(', ')}`]
}

function secondsOption (value: string): number {
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new InvalidArgumentError('give a whole number of seconds from 1')
  return Number(value)
}

function replicaOption (value: string): number {
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new InvalidArgumentError('give a replica number: 1, 2, …')
  return Number(value)
}

function tailOption (value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number of lines')
  return Number(value)
}

export function reconcilerCommands (cli: CliRegistry): void {
  const { program } = cli
  addInstallServiceCommand(cli)
  const path = (service: string, action = ''): string => `/api/v1/services/${encodeURIComponent(service)}${action}`

  program.command('deploy [service]')
    .description('deploy the services/*/service.toml of the server\'s working directory: all of them, or one; only changed containers are recreated')
    .option('--canary', 'run the service\'s new spec as one canary replica beside the others (which keep running) instead of replacing them')
    .option('--weight <percent>', 'with --canary: the percent of requests the proxy sends to the canary (1-99, default 10)', weightOption)
    .option('--auto-promote <seconds>', 'with --canary: judge the canary by its health after this many seconds, then promote it (healthy) or roll it back', secondsOption)
    .option('--prune', 'also remove the services deployed by a request with a body (POST /api/v1/deploy) that no service file declares')
    .action(async (service: string | undefined, options: { canary?: boolean, weight?: number, autoPromote?: number, prune?: boolean }) => {
      if (options.weight !== undefined && options.canary !== true) throw new UsageError('--weight goes with --canary')
      if (options.autoPromote !== undefined && options.canary !== true) throw new UsageError('--auto-promote goes with --canary')
      if (options.canary === true && service === undefined) throw new UsageError('a canary deploys one service: berth deploy <service> --canary')
      if (options.prune === true && (service !== undefined || options.canary === true)) throw new UsageError('--prune goes with a deploy of every service (berth deploy --prune)')
      const client = await controlClient(cli)
      const query = service !== undefined ? `?service=${encodeURIComponent(service)}` : options.prune === true ? '?prune=true' : ''
      if (options.canary === true) {
        const body = { canary: { ...(options.weight !== undefined && { weight: options.weight }), ...(options.autoPromote !== undefined && { auto_promote_secs: options.autoPromote }) } }
        const result = await withProgress(`starting a canary of ${service as string} on ${client.url.origin}`, async () => await client.json<DeployResult & { canary: CanaryView }>('POST', `/api/v1/deploy${query}`, body))
        report(result)
        const next = result.canary.judge_at === undefined ? `berth promote ${service as string} or berth rollback ${service as string}` : `judged by its health at ${result.canary.judge_at}`
        console.log(`canary of ${service as string}: ${describeCanary(result.canary)}; ${next}`)
        return
      }
      report(await withProgress(`deploying ${service ?? 'all services'} on ${client.url.origin}`, async () => await client.json<DeployResult>('POST', `/api/v1/deploy${query}`)))
    })

  program.command('promote <service>')
    .description('roll the canary\'s spec out to every replica of the service, one at a time, and end the canary')
    .action(async (service: string) => {
      const client = await controlClient(cli)
      report(await withProgress(`promoting the canary of ${service}`, async () => await client.json<DeployResult>('POST', path(service, '/promote'))))
    })

  program.command('rollback <service>')
    .description('back to the previous spec: remove a running canary (the replicas stay), or roll the version deployed before the current one out again')
    .action(async (service: string) => {
      const client = await controlClient(cli)
      const result = await withProgress(`rolling ${service} back`, async () => await client.json<RollbackResult>('POST', path(service, '/rollback')))
      report(result)
      const { from, to } = result.rollback
      console.log(`${service}: ${from.canary ? 'canary ' : ''}${from.image} (${from.hash.slice(0, 12)}) → ${to.image} (${to.hash.slice(0, 12)})`)
    })

  program.command('redeploy <service>')
    .description('pull the image again and recreate every replica of a deployed service, even if unchanged')
    .action(async (service: string) => {
      const client = await controlClient(cli)
      report(await withProgress(`redeploying ${service}`, async () => await client.json<DeployResult>('POST', path(service, '/redeploy'))))
    })

  program.command('scale <service> <replicas>')
    .description('run this many replicas of a deployed service (0 stops it); the count holds until the next deploy of its file, which applies the file\'s')
    .action(async (service: string, count: string) => {
      if (!/^\d{1,4}$/.test(count)) throw new UsageError(`the number of replicas is a whole number from 0, got "${count}"`)
      const client = await controlClient(cli)
      report(await withProgress(`scaling ${service} to ${Number(count)}`, async () => await client.json<DeployResult>('POST', path(service, '/scale'), { replicas: Number(count) })))
    })

  program.command('restart <service>')
    .description('restart the containers of a service one after the other (same containers, same environment)')
    .action(async (service: string) => {
      const client = await controlClient(cli)
      const { restarted } = await withProgress(`restarting ${service}`, async () => await client.json<{ restarted: string[] }>('POST', path(service, '/restart')))
      console.log(`restarted ${restarted.join(', ')}`)
    })

  program.command('tui')
    .description('a live terminal dashboard: services and replicas, routes and certificates, nodes, recent deploys, webhook invocations; keys to scale, restart and read logs')
    .action(async () => {
      if (process.stdin.isTTY !== true) throw new UsageError('berth tui needs a terminal (stdin is not a TTY)')
      const client = await controlClient(cli)
      // ink draws only a final frame when the environment looks like CI (is-in-ci reads CI when ink
      // loads); this is a terminal, checked above, so it is told the view is interactive.
      process.env.CI = 'false'
      const { runTui } = await import('./tui.js')
      await runTui(client)
    })

  program.command('reload')
    .description('restart the server in place (cluster.toml read again, every plugin started anew, listeners kept) and redeploy every service from its file (images pulled, containers recreated one replica at a time)')
    .action(async () => {
      const client = await controlClient(cli)
      const { reload } = await client.json<{ reload: ReloadRecord }>('POST', '/api/v1/reload')
      const { reloadOutcome } = await import('./reload-client.js')
      const done = await withProgress('reloading: restarting the server, then redeploying every service', async () => await reloadOutcome(client, reload.id))
      if (done.result === undefined) throw new Error(`reload failed: ${done.error ?? 'no result'}`)
      report(done.result)
    })

  program.command('status')
    .description('services with their serving and desired replicas, and below the table why a service is not running as declared')
    .option('--json', 'print the status answer as JSON')
    .option('-p, --project <name>', 'only the services of this project')
    .option('--stats', 'with each service\'s CPU (percent of one core), memory and network bytes received / sent, as the engine measures its containers on this node (about a second more)')
    .action(async (options: { json?: boolean, project?: string, stats?: boolean }) => {
      const client = await controlClient(cli)
      const params = new URLSearchParams({ ...(options.project !== undefined && { project: options.project }), ...(options.stats === true && { stats: 'true' }) }).toString()
      const answer = await client.json<{ services: ServiceStatus[] }>('GET', `/api/v1/status${params === '' ? '' : `?${params}`}`)
      if (options.json === true) {
        console.log(JSON.stringify(answer, null, 2))
        return
      }
      const routed = answer.services.some(s => s.route !== undefined)
      const canaries = answer.services.some(s => s.canary !== undefined)
      const clustered = answer.services.some(s => s.containers.some(c => c.node !== undefined))
      const stats = options.stats === true
      console.log(formatTable(['NAME', 'PROJECT', 'STATUS', 'REPLICAS', ...(clustered ? ['NODES'] : []), 'RESTARTS', ...(stats ? ['CPU', 'MEMORY', 'NET RX / TX'] : []), 'IMAGE', 'DOMAIN', ...(routed ? ['ROUTE', 'CERTIFICATE'] : []), ...(canaries ? ['CANARY'] : [])], answer.services.map(s => [
        s.name, s.project, s.status, `${s.running_replicas}/${s.replicas}`, ...(clustered ? [nodesColumn(s)] : []), String(s.restarts),
        ...(stats ? Object.values(serviceFigures(s)) : []), s.image, s.route === undefined ? s.domain ?? '' : `${s.route.domain}${s.route.path_prefix ?? ''}`,
        ...(routed ? routeColumns(s.route) : []),
        ...(canaries ? [s.canary === undefined ? '' : `${describeCanary(s.canary)}${s.canary.running ? '' : ' (not running)'}`] : [])
      ])))
      for (const s of answer.services) if (s.reason !== undefined) console.log(`${s.name}: ${s.reason}`)
    })

  program.command('deploys [service]')
    .description('the deploy history, oldest first: when, the trigger, who asked, the services and what failed; with a service, only its deploys, with its image, hash and outcome')
    .option('--json', 'print the history answer as JSON (only the entries of the service, when one is named)')
    .action(async (service: string | undefined, options: { json?: boolean }) => {
      const client = await controlClient(cli)
      const { deploys } = await client.json<{ deploys: HistoryEntry[] }>('GET', '/api/v1/deploys')
      const entries = service === undefined ? deploys : deploys.filter(d => d.services.some(s => s.name === service))
      if (options.json === true) {
        console.log(JSON.stringify({ deploys: entries }, null, 2))
        return
      }
      if (entries.length === 0) {
        console.log(service === undefined ? 'no deploys recorded' : `no deploys of ${service} recorded`)
        return
      }
      const header = service === undefined ? ['AT', 'TRIGGER', 'BY', 'SERVICES', 'RESULT'] : ['AT', 'TRIGGER', 'BY', 'IMAGE', 'HASH', 'RESULT']
      console.log(formatTable(header, entries.map(entry => historyRow(entry, service))))
    })

  program.command('logs <service>')
    .description('output of a service\'s containers (stdout and stderr)')
    .option('-n, --tail <lines>', 'lines from the end of each container\'s output (default: the server\'s [reconciler].logs_tail)', tailOption)
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .action(async (service: string, options: { tail?: number, follow?: boolean }) => {
      const client = await controlClient(cli)
      const query = new URLSearchParams()
      if (options.tail !== undefined) query.set('tail', String(options.tail))
      if (options.follow === true) query.set('follow', 'true')
      const stream = await client.stream(`${path(service, '/logs')}?${query.toString()}`)
      for await (const chunk of stream) process.stdout.write(chunk as Buffer)
    })

  program.command('jobs [service] [job]')
    .description('the scheduled jobs (of a service): schedule, next run, last run and its exit code, runs skipped; with a job, its last runs and the output of the latest')
    .option('--json', 'print the API\'s answer as JSON')
    .action(async (service: string | undefined, job: string | undefined, options: { json?: boolean }) => {
      const client = await controlClient(cli)
      if (service !== undefined && job !== undefined) {
        const answer = await client.json<{ runs: JobRun[] }>('GET', `/api/v1/jobs/${encodeURIComponent(service)}/${encodeURIComponent(job)}`)
        if (options.json === true) return console.log(JSON.stringify(answer, null, 2))
        console.log(formatTable(['STARTED', 'DURATION', 'EXIT'], answer.runs.map(r => [r.started_at, `${(r.duration_ms / 1000).toFixed(1)} s`, r.exit_code === null ? `not run: ${r.error ?? ''}` : String(r.exit_code)])))
        const last = answer.runs.at(-1)
        if (last !== undefined && last.output !== '') process.stdout.write(`output of the last run:\n${last.output}${last.output.endsWith('\n') ? '' : '\n'}`)
        return
      }
      const { jobs } = await client.json<{ jobs: JobStatus[] }>('GET', '/api/v1/jobs')
      const shown = jobs.filter(j => service === undefined || j.service === service)
      if (options.json === true) return console.log(JSON.stringify({ jobs: shown }, null, 2))
      console.log(formatTable(['SERVICE', 'JOB', 'SCHEDULE', 'NEXT RUN', 'LAST RUN', 'EXIT', 'SKIPPED'], shown.map(j => [
        j.service, j.job, j.schedule, j.next_run ?? '-', j.running ? 'running' : j.last_run?.started_at ?? '-',
        j.last_run === null ? '-' : j.last_run.exit_code === null ? 'not run' : String(j.last_run.exit_code), String(j.skipped)
      ])))
    })

  program.command('exec <service> <command...>')
    .description('run a command in a replica of a service (on the node asked), with its output, errors and exit code; interactive, with a TTY, when this terminal is one (write the command after --)')
    .option('-r, --replica <n>', 'the replica (default: the first one running)', replicaOption)
    .action(async (service: string, command: string[], options: { replica?: number }) => {
      // Loaded before the socket opens, so that its handlers see the first frames.
      const { runExec } = await import('./exec-client.js')
      const client = await controlClient(cli)
      const query = options.replica === undefined ? '' : `?replica=${options.replica}`
      const socket = await client.websocket(`${path(service, '/exec')}${query}`)
      process.exitCode = await runExec(socket, command)
    })
}
