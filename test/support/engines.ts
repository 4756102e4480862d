// More Docker engines on this machine, one per simulated node: each `dockerd` has its own data root,
// exec root, socket and pid file, its own default bridge (made here, with a subnet no other interface
// uses) and no iptables rules of its own, so it cannot disturb the run's engine or another test's:
// `--bridge=<its bridge> --iptables=false`. Not `--bridge=none`: a dockerd started so deletes the
// host's docker0, the bridge the run's engine uses. Published ports go through docker-proxy on 127.0.0.1.
// Images are imported into each engine (never pulled). A test may crash an engine (SIGKILL, as when it
// dies) and start it again on the same data. Stopped and wiped at test end: containers and networks
// removed first (a bridge interface outlives its daemon otherwise; a crashed daemon is started again
// for this), then the daemon, then its network namespace mount and directory.
import Docker from 'dockerode'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ensureDebianPackages, isRoot, Unavailable } from './component.js'
import { isRunning, startDaemon, type Daemon } from './daemon.js'
import { pollUntil } from './poll.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export interface ExtraEngine {
  /** The engine's unix socket, for `[reconciler].docker_socket`. */
  socket: string
  docker: Docker
  /** Its state: data-root, exec-root, socket, pid file, log. */
  dir: string
  /**
   * Kill the daemon and its containerd (SIGKILL, as a crash would end them) and wait until both are
   * gone, reaped too (the next daemon takes a containerd still in the process table, even a zombie,
   * for a running one and waits for it in vain); the containers stop with them and stay stopped when
   * the daemon starts again.
   */
  crash(): Promise<void>
  /** Start the daemon again on the same data root and socket, once it answers. */
  startAgain(): Promise<void>
  stop(): Promise<void>
}

/**
 * Start another `dockerd` for one test (root only; installs docker.io if needed). The directory is
 * short (a containerd socket path must fit in 108 bytes) and under /tmp.
 */
export async function extraEngine (t: Teardown, name: string): Promise<ExtraEngine> {
  if (!isRoot()) throw new Unavailable('only root can start another dockerd')
  await ensureDebianPackages(['docker.io'])
  const dir = mkdtempSync(`/tmp/bd-${name}-`)
  const socket = join(dir, 'docker.sock')
  const defaultBridge = ownBridge()
  const docker = new Docker({ socketPath: socket })
  let stopped = false
  let runs = 0
  const started: { daemon?: Daemon } = {}
  // `owner` stops the daemon at test end besides `stop` below: the test for the first daemon; nobody
  // else for one started again, since a teardown registered then would run before those of the
  // kernels still using the engine (teardowns run last registered first).
  const launch = async (owner: Teardown): Promise<void> => {
    started.daemon = await startDaemon(owner, `dockerd-${name}`, {
      command: '/usr/sbin/dockerd',
      args: [
        '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '--host', `unix://${socket}`,
        '--pidfile', join(dir, 'docker.pid'), `--bridge=${defaultBridge}`, '--iptables=false', '--ip6tables=false'
      ],
      logFile: join(dir, `dockerd${runs++ === 0 ? '' : `-${runs}`}.log`),
      env: { ...process.env, PATH: `/usr/sbin:/usr/bin:/sbin:/bin:${process.env.PATH ?? ''}` },
      ready: async () => { await docker.ping(); return true },
      timeout: 30_000
    })
  }
  await launch(t)
  const crash = async (): Promise<void> => {
    const pid = started.daemon?.pid
    if (pid === undefined) return
    const engine = [pid, ...childrenOf(pid)]
    for (const process_ of engine) {
      try { process.kill(process_, 'SIGKILL') } catch { /* already gone */ }
    }
    await pollUntil(() => engine.every(p => !existsSync(`/proc/${p}`)), { timeout: 10_000, what: `dockerd-${name} and its children to die` })
  }
  // Teardowns run last registered first: this one runs before the daemon's own, while the engine still answers.
  t.teardown(async () => { await stop() })
  async function stop (): Promise<void> {
    if (stopped) return
    stopped = true
    // An engine a test crashed and did not start again is started, to remove what it runs the usual way.
    if (started.daemon !== undefined && !isRunning(started.daemon.pid)) await startAgain().catch(() => undefined)
    const bridges: string[] = []
    try {
      await withDeadline(15_000, (async () => {
        for (const c of await docker.listContainers({ all: true })) await docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)
        for (const n of await docker.listNetworks()) {
          if (['bridge', 'host', 'none'].includes(n.Name)) continue
          bridges.push(`br-${n.Id.slice(0, 12)}`)
          await docker.getNetwork(n.Id).remove().catch(() => undefined)
        }
      })())
    } catch {
      // The engine is gone or stuck: what it left is cleaned up below.
    }
    const proxies = started.daemon === undefined ? [] : childrenOf(started.daemon.pid)
    await started.daemon?.stop()
    for (const pid of proxies) {
      try { process.kill(pid, 'SIGKILL') } catch { /* ended with its daemon */ }
    }
    removeLeftovers(dir)
    for (const bridge of [...bridges, defaultBridge]) {
      try { execFileSync('ip', ['link', 'delete', bridge], { stdio: 'ignore' }) } catch { /* removed with its network */ }
    }
  }
  async function startAgain (): Promise<void> {
    await launch({ teardown: () => undefined })
  }
  return { socket, docker, dir, crash, startAgain, stop }
}

/** A new bridge interface (up) on a free 10.213.x.0/24, for one engine's default bridge; its name. */
function ownBridge (): string {
  const name = `bdb${randomBytes(4).toString('hex')}`
  const used = execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' })
  let subnet = 0
  do subnet = 1 + Math.floor(Math.random() * 254)
  while (used.includes(` 10.213.${subnet}.`))
  execFileSync('ip', ['link', 'add', 'name', name, 'type', 'bridge'])
  execFileSync('ip', ['addr', 'add', `10.213.${subnet}.1/24`, 'dev', name])
  execFileSync('ip', ['link', 'set', name, 'up'])
  return name
}

/** Processes whose parent is `pid` (dockerd's docker-proxy processes). */
function childrenOf (pid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(entry))
    } catch { /* gone */ }
  }
  return found
}

async function withDeadline<T> (ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`not done within ${ms} ms`)) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * What an engine that did not stop cleanly leaves: container shims (they outlive containerd on purpose),
 * their overlay and network namespace mounts, bridges. Killed, unmounted (deepest first), removed.
 */
export function removeLeftovers (dir: string): void {
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (cmdline.includes('containerd-shim') && cmdline.includes(`${dir}/exec/`)) process.kill(Number(pid), 'SIGKILL')
    } catch { /* gone */ }
  }
  const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map(line => line.split(' ')[1]).filter(path => path !== undefined && path.startsWith(`${dir}/`))
  for (const path of mounts.sort((a, b) => b.length - a.length)) {
    try { execFileSync('umount', ['-l', path], { stdio: 'ignore' }) } catch { /* not mounted any more */ }
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
}
