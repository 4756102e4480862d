// Reconcile benchmark: a no-op deploy of 1, 20 and 100 services and a deploy of 20 new services,
// by Berth (the control API, and the `berth deploy` command end to end) side by side with
// `docker-compose up -d` of the same busybox services on host networking, in the same run, and the
// engine's own floor for creating 20 containers; then the cost of continuous reconcile at rest over
// 100 running services: CPU time per repair pass, and the server's CPU over idle minutes; and
// (`reconcile.js rollout`) the time to roll 6 replicas one at a time and three at a time (max_parallel).
// Run: npm run build && node dist/bench/reconcile.js   (needs a Docker engine, docker-compose and the
// image berth-test/busybox:2; BENCH_RUNS bounds the work; `reconcile.js idle` measures only the
// repair loop and `reconcile.js rollout` only rollouts, neither needs docker-compose;
// BENCH_DOCKER_SOCKET names another engine's socket)
import Docker from 'dockerode'
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pino from 'pino'
import { createKernel, type Kernel } from '../kernel/index.js'
import reconciler from '../plugins/reconciler/index.js'
import secrets from '../plugins/secrets/index.js'
import tokens from '../plugins/tokens/index.js'
import { envInt, markdownTable, median } from './stats.js'

const RUNS = envInt('BENCH_RUNS', 3)
const IMAGE = 'berth-test/busybox:2'
const SOCKET = process.env.BENCH_DOCKER_SOCKET ?? '/var/run/docker.sock'
/** Repair passes timed one by one, and idle windows of three repair intervals each (`BENCH_RUNS` of them). */
const PASSES = 20
const IDLE_WINDOW_MS = 15_000
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
const run = promisify(execFile)

interface Row { scenario: string, api: number, cli: number, compose: number, goal?: number }

async function preflight (docker: Docker, compose: boolean): Promise<void> {
  try {
    await docker.ping()
  } catch {
    throw new Error(`no Docker engine answers on ${SOCKET}; start one (dockerd &)`)
  }
  try {
    await docker.getImage(IMAGE).inspect()
  } catch {
    throw new Error(`image ${IMAGE} is missing; build it with: npx tap test/support-components/docker.test.ts`)
  }
  if (compose) await run('docker-compose', ['version']).catch(() => { throw new Error('docker-compose is missing; install it: apt-get install docker-compose') })
}

function serviceFile (count: number): string {
  return Array.from({ length: count }, (_, i) =>
    `[[service]]\nname = "s${i + 1}"\nimage = "${IMAGE}"\ncommand = ["/bin/busybox", "sleep", "86400"]\n`).join('\n')
}

function composeFile (count: number): string {
  const services = Array.from({ length: count }, (_, i) =>
    `  s${i + 1}:\n    image: ${IMAGE}\n    command: ["/bin/busybox", "sleep", "86400"]\n    network_mode: host\n    stop_grace_period: 0s\n`)
  return `version: "2.4"\nservices:\n${services.join('')}`
}

async function timed (fn: () => Promise<unknown>): Promise<number> {
  const begin = performance.now()
  await fn()
  return performance.now() - begin
}

/** Berth: an in-process kernel whose working directory holds services/bench/service.toml. */
class BerthTarget {
  readonly dir = mkdtempSync(join(tmpdir(), 'berth-bench-'))
  readonly instance = `bench-${process.pid}`
  kernel!: Kernel
  token = ''

  async start (): Promise<void> {
    this.kernel = await createKernel({
      cwd: this.dir,
      env: {},
      plugins: [tokens, secrets, reconciler],
      logger: pino({ level: 'silent' }),
      config: {
        server: { state_dir: join(this.dir, '.berth'), listeners: { control: { host: '127.0.0.1', port: 0 } } },
        reconciler: { instance: this.instance, network: 'host', stop_timeout_secs: 0, docker_socket: SOCKET }
      }
    })
    await this.kernel.start()
    this.token = readFileSync(join(this.dir, '.berth', 'admin.token'), 'utf8').trim()
  }

  declare (count: number): void {
    this.write(serviceFile(count))
  }

  write (file: string): void {
    mkdirSync(join(this.dir, 'services', 'bench'), { recursive: true })
    writeFileSync(join(this.dir, 'services', 'bench', 'service.toml'), file)
  }

  /** POST /api/v1/deploy; throws unless every service deployed. */
  async deploy (): Promise<{ changed: string[] }> {
    const response = await fetch(new URL('/api/v1/deploy', this.kernel.url('control')), { method: 'POST', headers: { authorization: `Bearer ${this.token}` } })
    const result = await response.json() as { errors?: unknown[], changed: string[], error?: string }
    if (!response.ok || (result.errors?.length ?? 0) > 0) throw new Error(`deploy failed: ${JSON.stringify(result.error ?? result.errors)}`)
    return result
  }

  /** `berth deploy` as an operator runs it (a new node process, the token from BERTH_TOKEN). */
  async deployWithCli (): Promise<void> {
    const env = { ...process.env, BERTH_URL: this.kernel.url('control').href, BERTH_TOKEN: this.token }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'deploy'], { env, stdio: 'ignore' })
      child.on('exit', code => { if (code === 0) resolve(); else reject(new Error(`berth deploy exited ${code}`)) })
    })
  }

  async removeAll (docker: Docker): Promise<void> {
    for (const c of await docker.listContainers({ all: true, filters: { label: [`berth.instance=${this.instance}`] } })) {
      await docker.getContainer(c.Id).remove({ force: true })
    }
  }

  async stop (docker: Docker): Promise<void> {
    await this.kernel.stop()
    await this.removeAll(docker)
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** docker-compose with a project of its own in a directory of its own. */
class ComposeTarget {
  readonly dir = mkdtempSync(join(tmpdir(), 'compose-bench-'))
  readonly project = `berthbench${process.pid}`

  declare (count: number): void {
    writeFileSync(join(this.dir, 'docker-compose.yml'), composeFile(count))
  }

  async compose (...args: string[]): Promise<void> {
    await run('docker-compose', ['-p', this.project, ...args], { cwd: this.dir, maxBuffer: 16 * 1024 * 1024 })
  }

  async up (): Promise<void> {
    await this.compose('up', '-d', '--remove-orphans')
  }

  async down (): Promise<void> {
    await this.compose('down', '-t', '0', '--remove-orphans')
  }

  async stop (): Promise<void> {
    await this.down()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** The engine alone: create and start `count` containers straight through dockerode, 8 at once (Berth's default parallelism). */
async function engineFloor (docker: Docker, count: number, label: string): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < count) {
      const i = next++
      const container = await docker.createContainer({
        name: `${label}-${i}`, Image: IMAGE, Cmd: ['/bin/busybox', 'sleep', '86400'], Labels: { 'berth-bench': label }, HostConfig: { NetworkMode: 'host' }
      })
      await container.start()
    }
  }))
}

async function removeLabelled (docker: Docker, label: string): Promise<void> {
  for (const c of await docker.listContainers({ all: true, filters: { label: [`berth-bench=${label}`] } })) await docker.getContainer(c.Id).remove({ force: true })
}

async function measure (times: number, prepare: () => Promise<unknown>, fn: () => Promise<unknown>): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    await prepare()
    samples.push(await timed(fn))
  }
  return median(samples)
}

/** The deploy scenarios, Berth beside docker-compose: a table. */
async function compareDeploys (docker: Docker): Promise<void> {
  const berth = new BerthTarget()
  const compose = new ComposeTarget()
  await berth.start()
  const rows: Row[] = []
  let floor = 0
  const nothing = async (): Promise<void> => undefined
  try {
    for (const count of [1, 20, 100]) {
      berth.declare(count)
      compose.declare(count)
      await berth.deploy()
      await compose.up()
      const api = await measure(RUNS, nothing, async () => {
        const { changed } = await berth.deploy()
        if (changed.length > 0) throw new Error(`a no-op deploy changed ${changed.join(', ')}`)
      })
      const cli = await measure(RUNS, nothing, async () => { await berth.deployWithCli() })
      const composeMs = await measure(RUNS, nothing, async () => { await compose.up() })
      rows.push({ scenario: `no-op reconcile, ${count} service${count === 1 ? '' : 's'}`, api, cli, compose: composeMs, ...(count === 100 && { goal: 0.1 }) })
      console.error(`no-op ${count}: berth ${api.toFixed(0)} ms (CLI ${cli.toFixed(0)} ms), docker-compose ${composeMs.toFixed(0)} ms`)
    }
    berth.declare(20)
    compose.declare(20)
    const api = await measure(RUNS, async () => { await berth.removeAll(docker) }, async () => { await berth.deploy() })
    const cli = await measure(RUNS, async () => { await berth.removeAll(docker) }, async () => { await berth.deployWithCli() })
    const composeMs = await measure(RUNS, async () => { await compose.down() }, async () => { await compose.up() })
    rows.push({ scenario: 'deploy of 20 new services', api, cli, compose: composeMs, goal: 0.5 })
    console.error(`deploy 20: berth ${api.toFixed(0)} ms (CLI ${cli.toFixed(0)} ms), docker-compose ${composeMs.toFixed(0)} ms`)
    const label = `floor-${process.pid}`
    floor = await measure(RUNS, async () => { await removeLabelled(docker, label) }, async () => { await engineFloor(docker, 20, label) })
    await removeLabelled(docker, label)
  } finally {
    await berth.stop(docker)
    await compose.stop()
  }
  const ms = (value: number): string => `${value.toFixed(0)} ms`
  console.log(`Median of ${RUNS} runs; Node ${process.version}; ${(await docker.version()).Version} engine; host networking, image ${IMAGE}.\n`)
  console.log(markdownTable(
    ['Scenario', 'berth (API)', 'berth deploy (CLI)', 'docker-compose up -d', 'API / compose', 'goal'],
    rows.map(r => [r.scenario, ms(r.api), ms(r.cli), ms(r.compose), `${(r.api / r.compose).toFixed(3)}×`, r.goal === undefined ? '' : `≤ ${r.goal}× ${r.api / r.compose <= r.goal ? '(met)' : '(missed)'}`])
  ))
  console.log(`\nThe engine alone (dockerode create + start of 20 containers, 8 at once): ${ms(floor)}, ${(floor / rows[rows.length - 1].compose).toFixed(3)}× docker-compose.`)
}

/** CPU time (user + system) this process has used, in ms. */
function cpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** CPU time (user + system) the dockerd started with `--host unix://SOCKET` has used, in ms; undefined when none is found in /proc. */
function engineCpuMs (): number | undefined {
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      if (!cmdline[0].endsWith('dockerd') || !cmdline.includes(`unix://${SOCKET}`)) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(fields[11]) + Number(fields[12])) * 10
    } catch { /* gone */ }
  }
  return undefined
}

/**
 * Continuous reconcile at rest over `count` running services: each repair pass lists the containers
 * once, diffs in memory and changes nothing. Timed pass by pass (this process's CPU, the engine's,
 * wall time), then the whole server left idle for windows of three intervals.
 */
async function measureIdleRepairs (docker: Docker, count: number): Promise<void> {
  const berth = new BerthTarget()
  await berth.start()
  try {
    berth.declare(count)
    await berth.deploy()
    const { repairs } = berth.kernel.service('reconciler')
    if (repairs === undefined) throw new Error('the repair loop is off')
    const intervalMs = (berth.kernel.config.sections.get('reconciler') as { repair_interval_secs: number }).repair_interval_secs * 1000
    const passes: Array<{ cpu: number, engine: number | undefined, wall: number }> = []
    for (let i = 0; i < PASSES; i++) {
      const [cpu, engine, wall] = [cpuMs(), engineCpuMs(), performance.now()]
      await repairs.pass()
      const engineAfter = engineCpuMs()
      passes.push({ cpu: cpuMs() - cpu, engine: engine === undefined || engineAfter === undefined ? undefined : engineAfter - engine, wall: performance.now() - wall })
    }
    const windows: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const [cpu, wall] = [cpuMs(), performance.now()]
      await new Promise(resolve => setTimeout(resolve, IDLE_WINDOW_MS))
      windows.push((cpuMs() - cpu) / (performance.now() - wall) * 100)
    }
    const metrics = await (await fetch(new URL('/metrics', berth.kernel.url('control')))).text()
    if (/^berth_reconciler_repairs_total\{/m.test(metrics)) throw new Error('a repair pass changed containers: the services were not at rest')
    const passCpu = median(passes.map(p => p.cpu))
    const engineValues = passes.flatMap(p => p.engine === undefined ? [] : [p.engine])
    const percent = passCpu / intervalMs * 100
    console.log(`\nContinuous reconcile at rest, ${count} running services (${(await docker.listContainers({ filters: { label: [`berth.instance=${berth.instance}`] } })).length} containers), repair interval ${intervalMs / 1000} s; medians of ${PASSES} passes and ${RUNS} idle windows of ${IDLE_WINDOW_MS / 1000} s:\n`)
    console.log(markdownTable(['measure', 'value', 'goal'], [
      ['server CPU per repair pass', `${passCpu.toFixed(1)} ms (min ${Math.min(...passes.map(p => p.cpu)).toFixed(1)}, max ${Math.max(...passes.map(p => p.cpu)).toFixed(1)})`, ''],
      ['wall time per repair pass', `${median(passes.map(p => p.wall)).toFixed(1)} ms`, ''],
      ['engine (dockerd) CPU per repair pass', engineValues.length === 0 ? 'not found in /proc' : `${median(engineValues).toFixed(0)} ms (10 ms ticks)`, ''],
      ['repair loop: CPU per pass / interval', `${percent.toFixed(2)} % of a core`, `< 1 % ${percent < 1 ? '(met)' : '(missed)'}`],
      ['whole server idle (loop, timers, event stream)', `${median(windows).toFixed(2)} % of a core (min ${Math.min(...windows).toFixed(2)}, max ${Math.max(...windows).toFixed(2)})`, '']
    ]))
  } finally {
    await berth.stop(docker)
  }
}

/** One service of ROLLOUT_REPLICAS replicas, each healthy by the engine's check a second after it starts, replaced `parallel` at a time. */
function rolloutFile (version: number, parallel: number): string {
  return `[[service]]\nname = "roll"\nimage = "${IMAGE}"\ncommand = ["/bin/busybox", "sleep", "86400"]\nreplicas = ${ROLLOUT_REPLICAS}\n` +
    `max_parallel = ${parallel}\nenv = { VERSION = "${version}" }\n[service.healthcheck]\ncommand = "true"\ninterval_secs = 1\n`
}

const ROLLOUT_REPLICAS = 6
const ROLLOUT_PARALLEL = [1, 3]

/** Wall time of a rollout of every replica (an env change), at each max_parallel, rounds interleaved. */
async function measureRollouts (docker: Docker): Promise<void> {
  const berth = new BerthTarget()
  await berth.start()
  try {
    let version = 0
    berth.write(rolloutFile(version, 1))
    await berth.deploy()
    const times = new Map(ROLLOUT_PARALLEL.map(p => [p, [] as number[]]))
    for (let round = 0; round < RUNS; round++) {
      for (const parallel of ROLLOUT_PARALLEL) {
        berth.write(rolloutFile(++version, parallel))
        times.get(parallel)?.push(await timed(async () => { if ((await berth.deploy()).changed.length !== 1) throw new Error('the rollout changed nothing') }))
      }
    }
    const one = median(times.get(1) ?? [])
    console.log(`\nRollout of ${ROLLOUT_REPLICAS} replicas (each healthy by the engine's check, interval 1 s), median of ${RUNS} runs:\n`)
    console.log(markdownTable(['max_parallel', 'rollout', 'vs one at a time'], ROLLOUT_PARALLEL.map(p => {
      const ms = median(times.get(p) ?? [])
      return [String(p), `${(ms / 1000).toFixed(1)} s`, `${(one / ms).toFixed(2)}× faster`]
    })))
  } finally {
    await berth.stop(docker)
  }
}

async function main (): Promise<void> {
  const mode = process.argv[2]
  const docker = new Docker({ socketPath: SOCKET })
  await preflight(docker, mode === undefined)
  if (mode === 'rollout') {
    await measureRollouts(docker)
    return
  }
  if (mode !== 'idle') await compareDeploys(docker)
  await measureIdleRepairs(docker, 100)
}

await main()
