// Cluster benchmark: what a leader pays for agents. A real leader (`berth server` with the cluster
// plugin, its engine the Docker engine on /var/run/docker.sock, running no replica itself) and
// simulated agents in a child process speaking the real protocol (bench/cluster-sim.ts):
// - heartbeat handling: the leader's CPU time per heartbeat, from /proc/<pid>/stat over a window in
//   which 50 agents beat every HEARTBEAT_MS (the leader's [cluster].heartbeat_interval_secs, which it
//   tells its agents), minus the same window on a leader whose agents beat every 10 s;
// - placement: the placement function alone for 50 nodes × 500 replicas (and larger clusters), and a
//   whole deploy of 500 replicas through the API (placement, 50 desired states sent, applied, acknowledged).
// Run: npm run build && BENCH_RUNS=7 node dist/bench/cluster.js   (needs a Docker engine)
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { place, type PlacementNode, type PlacementService } from '../plugins/nodes/placement.js'
import { envInt, markdownTable, median } from './stats.js'
import { probablyFreePort } from '../test/support/net.js'

const RUNS = envInt('BENCH_RUNS', 5)
const SECONDS = envInt('BENCH_SECONDS', 5)
const AGENTS = 50
const SERVICES = 50
const REPLICAS = 10
const HEARTBEAT_MS = envInt('BENCH_HEARTBEAT_MS', 20)
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
const SIM = fileURLToPath(new URL('./cluster-sim.js', import.meta.url))
const TICKS = 100 // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s

function cpuMs (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1000 / TICKS
}

async function until (what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await probe().catch(() => false)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

interface Leader { child: ChildProcess, url: string, admin: string, dir: string }

async function startLeader (heartbeatSecs: number): Promise<Leader> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-cluster-'))
  const port = await probablyFreePort()
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server]', 'log_level = "warn"', 'plugins = ["tokens", "secrets", "reconciler", "cluster", "nodes"]',
    '[server.listeners.control]', 'host = "127.0.0.1"', `port = ${port}`,
    '[reconciler]', `instance = "bench-cluster-${process.pid}"`, 'node_name = "leader"',
    // Offline only after a long silence: the slow-heartbeat baseline must not take nodes offline.
    '[cluster]', `heartbeat_interval_secs = ${heartbeatSecs}`, 'offline_after_secs = 60', 'reschedule_after_secs = 600', 'schedule_leader = false', ''
  ].join('\n'))
  const child = spawn(process.execPath, [CLI, 'server'], { cwd: dir, stdio: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  await until('the leader', async () => (await fetch(`${url}/api/v1/health`)).ok)
  return { child, url, admin: readFileSync(join(dir, '.berth', 'admin.token'), 'utf8').trim(), dir }
}

async function call<T> (leader: Leader, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${leader.url}${path}`, { method, headers: { authorization: `Bearer ${leader.admin}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return await response.json() as T
}

async function heartbeats (leader: Leader): Promise<number> {
  return Number(/^berth_cluster_heartbeats_total (\d+)/m.exec(await (await fetch(`${leader.url}/metrics`)).text())?.[1] ?? 0)
}

/** 50 simulated agents in a child process (they beat as often as the leader tells them). */
async function startAgents (leader: Leader): Promise<ChildProcess> {
  const { token } = await call<{ token: string }>(leader, 'POST', '/api/v1/tokens', { name: 'bench', role: 'agent' })
  const child = spawn(process.execPath, [SIM, leader.url.replace('http://', ''), token, String(AGENTS)], { stdio: ['pipe', 'ignore', 'inherit'] })
  await until(`${AGENTS} agents`, async () => (await call<{ nodes: Array<{ role: string, status: string }> }>(leader, 'GET', '/api/v1/cluster/info')).nodes.filter(n => n.role === 'agent' && n.status === 'ready').length === AGENTS)
  return child
}

async function stopAgents (child: ChildProcess): Promise<void> {
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.stdin?.end()
  await exited
}

/** Leader CPU ms and heartbeats over SECONDS. */
async function window (leader: Leader): Promise<{ cpu: number, beats: number }> {
  const pid = leader.child.pid as number
  const [cpu0, beats0] = [cpuMs(pid), await heartbeats(leader)]
  await new Promise(resolve => setTimeout(resolve, SECONDS * 1000))
  return { cpu: cpuMs(pid) - cpu0, beats: await heartbeats(leader) - beats0 }
}

function placementInputs (nodes: number, services: number, replicas: number): { nodes: PlacementNode[], services: PlacementService[] } {
  return {
    nodes: Array.from({ length: nodes }, (_, i) => ({ name: `node-${i + 1}`, accepts: true, keeps: true, drained: false, capacity: { cpus: 8, memory_bytes: 32 * 1024 ** 3 } })),
    services: Array.from({ length: services }, (_, i) => ({ name: `svc-${i + 1}`, replicas, cpus: 0.1, memory_bytes: 64 * 1024 ** 2 }))
  }
}

async function main (): Promise<void> {
  // The placement function alone.
  const pure: string[][] = []
  for (const [nodes, services, replicas] of [[AGENTS, SERVICES, REPLICAS], [200, 200, 10], [1000, 1000, 10]]) {
    const input = placementInputs(nodes, services, replicas)
    const times: number[] = []
    for (let run = 0; run < Math.max(RUNS, 5); run++) {
      const begin = performance.now()
      place(input.services, input.nodes, new Map())
      times.push(performance.now() - begin)
    }
    pure.push([`${nodes} nodes × ${services * replicas} replicas`, median(times).toFixed(2), `${Math.min(...times).toFixed(2)}–${Math.max(...times).toFixed(2)}`])
  }

  const heartbeatRows: string[][] = []
  const deployRows: number[] = []
  const withLeader = async <T>(heartbeatSecs: number, work: (leader: Leader, agents: ChildProcess) => Promise<T>): Promise<T> => {
    const leader = await startLeader(heartbeatSecs)
    try {
      const agents = await startAgents(leader)
      try {
        return await work(leader, agents)
      } finally {
        await stopAgents(agents)
      }
    } finally {
      await stop(leader.child)
      rmSync(leader.dir, { recursive: true, force: true })
    }
  }
  for (let run = 0; run < RUNS; run++) {
    const busy = await withLeader(HEARTBEAT_MS / 1000, async leader => await window(leader))
    const idle = await withLeader(10, async leader => {
      const measured = await window(leader)
      const services = Array.from({ length: SERVICES }, (_, i) => ({ name: `svc-${i + 1}`, project: 'bench', image: 'berth-test/busybox:2', port: 8080, replicas: REPLICAS }))
      const begin = performance.now()
      const result = await call<{ errors: unknown[] }>(leader, 'POST', '/api/v1/deploy', { services })
      deployRows.push(performance.now() - begin)
      if (result.errors.length > 0) throw new Error(`deploy errors: ${JSON.stringify(result.errors).slice(0, 300)}`)
      return measured
    })
    const perBeat = (busy.cpu - idle.cpu) / Math.max(1, busy.beats - idle.beats) * 1000
    heartbeatRows.push([String(run + 1), String(Math.round(busy.beats / SECONDS)), (busy.cpu / SECONDS / 10).toFixed(1), (idle.cpu / SECONDS / 10).toFixed(1), perBeat.toFixed(1)])
  }
  const perBeat = heartbeatRows.map(r => Number(r[4]))
  console.log(`## Heartbeats: ${AGENTS} agents every ${HEARTBEAT_MS} ms, ${SECONDS} s windows, ${RUNS} runs (median ${median(perBeat).toFixed(1)} µs of leader CPU per heartbeat)\n`)
  console.log(markdownTable(['run', 'heartbeats/s', `leader CPU % (every ${HEARTBEAT_MS} ms)`, 'leader CPU % (every 10 s)', 'µs CPU per heartbeat'], heartbeatRows))
  console.log(`\n## Placement function alone (median of ${Math.max(RUNS, 5)})\n`)
  console.log(markdownTable(['cluster', 'median ms', 'min–max ms'], pure))
  console.log(`\n## Deploy of ${SERVICES * REPLICAS} replicas (${SERVICES} services × ${REPLICAS}) on ${AGENTS} agents through POST /api/v1/deploy\n`)
  console.log(markdownTable(['median ms', 'min–max ms', 'runs'], [[median(deployRows).toFixed(0), `${Math.min(...deployRows).toFixed(0)}–${Math.max(...deployRows).toFixed(0)}`, String(RUNS)]]))
}

await main()
