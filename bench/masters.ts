// Masters on etcd against a lone master on LMDB: real `berth server` masters (tokens, secrets,
// reconciler, cluster, nodes; their engine the Docker engine on /var/run/docker.sock, running no
// replica: schedule_leader = false), a three-member etcd of the benchmark's own (Debian's
// etcd-server, as the tests start it), and one simulated agent (bench/cluster-sim.ts: the real
// protocol, a stand-in engine that runs what it is sent at once), so that the figures are the
// control plane's, not a container engine's.
// - Deploy latency at 100 services: 100 one-replica services deployed, then BENCH_DEPLOYS deploys
//   that each change one of them; the API's answer time per deploy (median, p90), on a lone master
//   (LMDB) and on a master whose state is in etcd, side by side; and for etcd the writes (etcd
//   revisions: one per transaction) per deploy.
// - Failover: two masters and the agent; the leader killed with SIGKILL, then a deploy asked of the
//   other master every 100 ms until one is accepted and carried out (answered 200 with the service
//   deployed: the agent applied it). Time from the kill to that answer, BENCH_RUNS times (the killed
//   master restarted as a follower in between, so the leaders alternate).
// Run: npm run build && BENCH_RUNS=5 node dist/bench/masters.js
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { etcdctl, ownEtcd } from '../test/support/etcd.js'
import { probablyFreePort } from '../test/support/net.js'
import { simulateAgents, type SimulatedCluster } from './cluster-sim.js'
import { envInt, markdownTable, median } from './stats.js'

const RUNS = envInt('BENCH_RUNS', 5)
const DEPLOYS = envInt('BENCH_DEPLOYS', 20)
const SERVICES = 100
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))

interface Master { dir: string, url: string, port: number, child: ChildProcess, admin: string }

async function until<T> (what: string, probe: () => Promise<T | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => false as const)
    if (value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function stop (child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill(signal)
  await exited
}

function masterDir (name: string, etcd?: { endpoints: string[], prefix: string }): { dir: string, port: Promise<number> } {
  const dir = mkdtempSync(join(tmpdir(), `berth-bench-masters-${name}-`))
  const port = probablyFreePort().then(port => {
    writeFileSync(join(dir, 'cluster.toml'), [
      '[server]', 'log_level = "warn"', 'plugins = ["tokens", "secrets", "reconciler", "cluster", "nodes"]',
      '[server.listeners.control]', 'host = "127.0.0.1"', `port = ${port}`,
      '[reconciler]', `instance = "bench-masters-${process.pid}"`, `node_name = "${name}"`,
      '[cluster]', 'heartbeat_interval_secs = 1', 'offline_after_secs = 5', 'reschedule_after_secs = 600', 'schedule_leader = false',
      ...(etcd === undefined ? [] : ['[cluster.etcd]', `endpoints = ${JSON.stringify(etcd.endpoints)}`, `prefix = "${etcd.prefix}"`]), ''
    ].join('\n'))
    return port
  })
  return { dir, port }
}

async function startMaster (dir: string, port: number): Promise<Master> {
  const child = spawn(process.execPath, [CLI, 'server'], { cwd: dir, stdio: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  await until(`the master in ${dir}`, async () => (await fetch(`${url}/api/v1/health`)).ok)
  return { dir, url, port, child, admin: readFileSync(join(dir, '.berth', 'admin.token'), 'utf8').trim() }
}

async function call<T> (master: Master, method: string, path: string, body?: unknown, token = master.admin): Promise<{ status: number, body: T }> {
  const response = await fetch(`${master.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
  return { status: response.status, body: await response.json() as T }
}

async function leads (master: Master): Promise<boolean> {
  const health = await (await fetch(`${master.url}/api/v1/health`, { signal: AbortSignal.timeout(1000) })).json() as { plugins: Record<string, { details?: { role?: string } }> }
  return health.plugins.cluster?.details?.role !== 'follower'
}

const service = (n: number, run = 0): Record<string, unknown> => ({ name: `svc-${n}`, project: 'bench', image: 'bench/sim:1', port: 8080, replicas: 1, env: { RUN: String(run) } })

async function agentReady (master: Master): Promise<boolean> {
  const info = await call<{ nodes?: Array<{ name: string, status: string }> }>(master, 'GET', '/api/v1/cluster/info')
  return info.status === 200 && info.body.nodes?.some(node => node.name === 'sim-1' && node.status === 'ready') === true
}

async function withAgent<T> (masters: Master[], leader: Master, work: (agent: SimulatedCluster) => Promise<T>): Promise<T> {
  const { body } = await call<{ token: string }>(leader, 'POST', '/api/v1/tokens', { name: 'sim', role: 'agent' })
  const agent = simulateAgents({ leader: masters.map(m => `127.0.0.1:${m.port}`).join(','), token: body.token, count: 1, heartbeatMs: 1000 })
  try {
    await until('the agent', async () => await agentReady(leader))
    return await work(agent)
  } finally {
    await agent.stop()
  }
}

/** Median and p90 of the deploys changing one service of 100, and etcd's revisions they made (etcd only). */
async function deployLatency (etcd?: { endpoints: string[], prefix: string }): Promise<{ first: number, times: number[], writes?: number }> {
  const { dir, port } = masterDir('solo', etcd)
  const master = await startMaster(dir, await port)
  try {
    await until('the master to lead', async () => await leads(master))
    return await withAgent([master], master, async () => {
      const begin = performance.now()
      const all = await call<{ errors: unknown[] }>(master, 'POST', '/api/v1/deploy', { services: Array.from({ length: SERVICES }, (_, i) => service(i + 1)) })
      if (all.status !== 200 || all.body.errors.length > 0) throw new Error(`deploying ${SERVICES} services: ${all.status} ${JSON.stringify(all.body)}`)
      const first = performance.now() - begin
      const revision = async (): Promise<number> => etcd === undefined ? 0 : Number(/"revision":(\d+)/.exec(await etcdctl(etcd.endpoints, ['endpoint', 'status', '-w', 'json']))?.[1] ?? 0)
      const before = await revision()
      const times: number[] = []
      for (let i = 0; i < DEPLOYS; i++) {
        const n = (i % SERVICES) + 1
        const started = performance.now()
        const one = await call<{ deployed: string[] }>(master, 'POST', '/api/v1/deploy', { services: [service(n, i + 1)] })
        times.push(performance.now() - started)
        if (one.status !== 200 || !one.body.deployed.includes(`svc-${n}`)) throw new Error(`deploy ${i}: ${one.status} ${JSON.stringify(one.body)}`)
      }
      const writes = etcd === undefined ? undefined : (await revision() - before) / DEPLOYS
      return { first, times, ...(writes !== undefined && { writes }) }
    })
  } finally {
    await stop(master.child)
    rmSync(dir, { recursive: true, force: true })
  }
}

async function failover (etcd: { endpoints: string[], prefix: string }): Promise<number[]> {
  const a = masterDir('a', etcd)
  const b = masterDir('b', etcd)
  const ports = [await a.port, await b.port]
  const masters: Master[] = [await startMaster(a.dir, ports[0])]
  await until('master a to lead', async () => await leads(masters[0]))
  mkdirSync(join(b.dir, '.berth'), { recursive: true, mode: 0o700 })
  copyFileSync(join(a.dir, '.berth', 'secrets.key'), join(b.dir, '.berth', 'secrets.key'))
  masters.push(await startMaster(b.dir, ports[1]))
  try {
    return await withAgent(masters, masters[0], async () => {
      const first = await call<{ errors: unknown[] }>(masters[0], 'POST', '/api/v1/deploy', { services: [service(1)] })
      if (first.status !== 200) throw new Error(`first deploy: ${first.status} ${JSON.stringify(first.body)}`)
      const times: number[] = []
      for (let run = 1; run <= RUNS; run++) {
        const leaderIndex = await until('one leader', async () => {
          const roles = await Promise.all(masters.map(leads))
          return roles.filter(Boolean).length === 1 && roles.indexOf(true)
        })
        const [leader, other] = [masters[leaderIndex], masters[1 - leaderIndex]]
        const killedAt = performance.now()
        await stop(leader.child, 'SIGKILL')
        await until('a deploy carried out by the new leader', async () => {
          const answer = await call<{ deployed?: string[] }>(other, 'POST', '/api/v1/deploy', { services: [service(1, run)] }, masters[0].admin)
          return answer.status === 200 && answer.body.deployed?.includes('svc-1') === true
        }, 60_000)
        times.push(performance.now() - killedAt)
        // The killed master back, as a follower; the agent with the new leader.
        masters[leaderIndex] = await startMaster(leader.dir, leader.port)
        await until('the agent with the new leader', async () => await agentReady(other))
      }
      return times
    })
  } finally {
    for (const master of masters) await stop(master.child)
    for (const dir of [a.dir, b.dir]) rmSync(dir, { recursive: true, force: true })
  }
}

function p90 (values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]
}

async function main (): Promise<void> {
  const teardowns: Array<() => void | Promise<void>> = []
  const cluster = await ownEtcd({ teardown: fn => { teardowns.push(fn) } })
  try {
    const prefix = (name: string): string => `/berth-bench/${process.pid}-${name}/`
    const lmdb = await deployLatency()
    const onEtcd = await deployLatency({ endpoints: cluster.endpoints, prefix: prefix('deploys') })
    console.log(`Deploy latency, ${SERVICES} services deployed, ${DEPLOYS} deploys each changing one (one simulated agent):\n`)
    console.log(markdownTable(['state', `deploy of ${SERVICES} services ms`, 'one changed: median ms', 'p90 ms', 'etcd writes per deploy'], [
      ['LMDB (lone master)', lmdb.first.toFixed(0), median(lmdb.times).toFixed(1), p90(lmdb.times).toFixed(1), '-'],
      ['etcd (3 members)', onEtcd.first.toFixed(0), median(onEtcd.times).toFixed(1), p90(onEtcd.times).toFixed(1), (onEtcd.writes ?? 0).toFixed(1)]
    ]))
    const times = await failover({ endpoints: cluster.endpoints, prefix: prefix('failover') })
    console.log(`\nFailover, leader killed → a deploy accepted and carried out by the new leader (lease TTL 5 s), ${times.length} runs:\n`)
    console.log(markdownTable(['median s', 'min–max s', 'runs s'], [[(median(times) / 1000).toFixed(2), `${(Math.min(...times) / 1000).toFixed(2)}–${(Math.max(...times) / 1000).toFixed(2)}`, times.map(t => (t / 1000).toFixed(2)).join(', ')]]))
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
  }
}

await main()
