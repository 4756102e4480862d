// etcd 3.4 for tests: Debian's etcd-server and etcd-client (installed when missing), three members on
// loopback ports, their data in memory (/dev/shm: etcd fsyncs every write, and on a disk shared with
// the rest of the suite a slow fsync can stall its raft log for seconds). One cluster serves the whole
// test run (`runEtcd`, stopped by teardown.ts); each test file takes a fresh key prefix of its own
// (`etcdPrefix(t)`, its keys deleted at its end). A test that kills, stops or restarts a member takes a
// cluster of its own (`ownEtcd(t)`). Free ports only: a system etcd on 2379 (the package's service,
// never started here) cannot clash.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import { ensureDebianPackages, requireComponent, type ComponentTest } from './component.js'
import { isRunning, sharedServer, startDaemon, type Daemon } from './daemon.js'
import { probablyFreePort } from './net.js'
import { pollUntil } from './poll.js'

const run = promisify(execFile)
const MEMBERS = 3
const DATA_DIR = '/dev/shm/berth-test-etcd'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** Where the members listen: client and peer ports, member i named `e<i+1>`. */
interface Layout { dir: string, token: string, clientPorts: number[], peerPorts: number[] }

export interface EtcdCluster {
  /** The members' client URLs (http://127.0.0.1:PORT), in member order. */
  endpoints: string[]
}

export interface OwnEtcd extends EtcdCluster {
  /** SIGKILL member `index` (0-based) and wait until it is gone. */
  kill(index: number): Promise<void>
  /** SIGTERM member `index` and wait until it has exited. */
  stop(index: number): Promise<void>
  /** Start member `index` again on its data directory and ports; resolves once it is healthy. */
  start(index: number): Promise<void>
}

const endpointsOf = (layout: Layout): string[] => layout.clientPorts.map(port => `http://127.0.0.1:${port}`)

/** Whether the member at `endpoint` says it is healthy (it is part of a cluster with a leader). */
async function healthy (endpoint: string): Promise<boolean> {
  try {
    const answer = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) })
    return ((await answer.json()) as { health?: string }).health === 'true'
  } catch {
    return false
  }
}

async function newLayout (prefix: string): Promise<Layout> {
  mkdirSync(DATA_DIR, { recursive: true })
  const dir = mkdtempSync(join(DATA_DIR, prefix))
  const ports: number[] = []
  // One at a time, so that no two members are given the same port.
  while (ports.length < 2 * MEMBERS) {
    const port = await probablyFreePort()
    if (!ports.includes(port)) ports.push(port)
  }
  return { dir, token: `berth-test-${randomBytes(4).toString('hex')}`, clientPorts: ports.slice(0, MEMBERS), peerPorts: ports.slice(MEMBERS) }
}

/** Start member `index`; it is ready once the cluster has a leader, so start a quorum at once. */
async function startMember (owner: Teardown | 'run', name: string, layout: Layout, index: number): Promise<Daemon> {
  const member = `e${index + 1}`
  const client = `http://127.0.0.1:${layout.clientPorts[index]}`
  const peer = `http://127.0.0.1:${layout.peerPorts[index]}`
  const cluster = layout.peerPorts.map((port, i) => `e${i + 1}=http://127.0.0.1:${port}`).join(',')
  return await startDaemon(owner, name, {
    command: 'etcd',
    args: ['--name', member, '--data-dir', join(layout.dir, member), '--logger', 'zap', '--log-outputs', 'stderr',
      '--listen-client-urls', client, '--advertise-client-urls', client, '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer, '--initial-cluster', cluster, '--initial-cluster-state', 'new',
      '--initial-cluster-token', layout.token],
    logFile: join(layout.dir, `${member}.log`),
    ready: async () => await healthy(client),
    timeout: 30_000
  })
}

async function ensureEtcd (): Promise<void> {
  await ensureDebianPackages(['etcd-server', 'etcd-client'])
}

const RUN_NAME = 'etcd'
const memberName = (index: number): string => `${RUN_NAME}-e${index + 1}`

/** The run's etcd cluster, started by the first test file that asks (stopped by teardown.ts). */
export async function runEtcd (): Promise<EtcdCluster> {
  await ensureEtcd()
  const names = Array.from({ length: MEMBERS }, (_, i) => memberName(i))
  const layout = await sharedServer<Layout & { pids: number[] }>(RUN_NAME, {
    daemons: names,
    serves: async known => known.pids.every(isRunning) && (await Promise.all(endpointsOf(known).map(healthy))).every(Boolean),
    ended: known => !known.pids.some(isRunning),
    start: async () => {
      const layout = await newLayout('etcd-')
      const daemons = await Promise.all(names.map(async (name, i) => await startMember('run', name, layout, i)))
      return { ...layout, pids: daemons.map(daemon => daemon.pid) }
    }
  })
  return { endpoints: endpointsOf(layout) }
}

/** A cluster of the test's own (to kill, stop and restart members), stopped and removed at its end. */
export async function ownEtcd (t: Teardown): Promise<OwnEtcd> {
  await ensureEtcd()
  const layout = await newLayout('etcd-own-')
  const name = (index: number): string => `etcd e${index + 1} on ${layout.clientPorts[index]}`
  const daemons: Array<Daemon | undefined> = await Promise.all(layout.clientPorts.map(async (_, i) => await startMember(t, name(i), layout, i)))
  const ended = async (index: number, signal: NodeJS.Signals): Promise<void> => {
    const daemon = daemons[index]
    if (daemon === undefined) return
    daemons[index] = undefined
    if (signal === 'SIGTERM') {
      await daemon.stop()
      return
    }
    process.kill(daemon.pid, signal)
    await pollUntil(() => !isRunning(daemon.pid), { timeout: 5_000, what: `etcd member ${index + 1} to die` })
  }
  t.teardown(async () => {
    // One at a time: SIGTERM to all members at once makes each wait for the others for seconds.
    for (let i = 0; i < MEMBERS; i++) await ended(i, 'SIGTERM')
    rmSync(layout.dir, { recursive: true, force: true })
  })
  return {
    endpoints: endpointsOf(layout),
    kill: async index => { await ended(index, 'SIGKILL') },
    stop: async index => { await ended(index, 'SIGTERM') },
    start: async index => { daemons[index] ??= await startMember(t, name(index), layout, index) }
  }
}

/** `etcdctl` against `endpoints` (API 3, short deadlines); its standard output. */
export async function etcdctl (endpoints: string[], args: string[]): Promise<string> {
  const { stdout } = await run('etcdctl', ['--endpoints', endpoints.join(','), '--dial-timeout=500ms', '--command-timeout=2s', ...args], {
    env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000
  })
  return stdout
}

/** The index in `endpoints` of the member that leads etcd's own raft group (the first when none says so). */
export async function raftLeaderIndex (endpoints: string[]): Promise<number> {
  const status = JSON.parse(await etcdctl(endpoints, ['endpoint', 'status', '-w', 'json'])) as Array<{ Endpoint: string, Status: { header: { member_id: number }, leader: number } }>
  return Math.max(0, endpoints.indexOf(status.find(s => s.Status.header.member_id === s.Status.leader)?.Endpoint ?? ''))
}

/** The run's cluster and a fresh key prefix (`/berth-test/<random>/`) for this test file, its keys deleted at the end. */
export async function etcdPrefix (t: Teardown): Promise<EtcdCluster & { prefix: string }> {
  const cluster = await runEtcd()
  const prefix = `/berth-test/${process.pid}-${randomBytes(4).toString('hex')}/`
  t.teardown(async () => { await etcdctl(cluster.endpoints, ['del', '--prefix', prefix]) })
  return { ...cluster, prefix }
}

/** `etcdPrefix` under the CI rule: undefined (the test skipped, or failed under CI) when etcd cannot be had. */
export async function requireEtcd (t: ComponentTest & Teardown): Promise<EtcdCluster & { prefix: string } | undefined> {
  return await requireComponent(t, 'etcd', async () => await etcdPrefix(t))
}
