// More Docker engines on this machine, one per simulated node: each `dockerd` has its own data root,
// exec root, socket and pid file, and no default bridge and no iptables rules of its own (so it
// cannot disturb the run's engine or another test's): `--bridge=none --iptables=false`. Networks it
// creates are bridges with their own subnets; published ports go through docker-proxy on 127.0.0.1.
// Images are imported into each engine (never pulled). Stopped and wiped at test end: containers and
// networks removed first (a bridge interface outlives its daemon otherwise), then the daemon, then
// its network namespace mount and directory.
import Docker from 'dockerode'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ensureDebianPackages, isRoot, Unavailable } from './component.js'
import { startDaemon, type Daemon } from './daemon.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export interface ExtraEngine {
  /** The engine's unix socket, for `[reconciler].docker_socket`. */
  socket: string
  docker: Docker
  /** Its state: data-root, exec-root, socket, pid file, log. */
  dir: string
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
  const docker = new Docker({ socketPath: socket })
  let stopped = false
  const started: { daemon?: Daemon } = {}
  // Registered before the daemon's own teardown, so containers and networks go while the engine still answers.
  t.teardown(async () => { await stop() })
  started.daemon = await startDaemon(t, `dockerd-${name}`, {
    command: '/usr/sbin/dockerd',
    args: [
      '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '--host', `unix://${socket}`,
      '--pidfile', join(dir, 'docker.pid'), '--bridge=none', '--iptables=false', '--ip6tables=false'
    ],
    logFile: join(dir, 'dockerd.log'),
    env: { ...process.env, PATH: `/usr/sbin:/usr/bin:/sbin:/bin:${process.env.PATH ?? ''}` },
    ready: async () => { await docker.ping(); return true },
    timeout: 30_000
  })
  async function stop (): Promise<void> {
    if (stopped) return
    stopped = true
    try {
      for (const c of await docker.listContainers({ all: true })) await docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)
      for (const n of await docker.listNetworks()) {
        if (!['bridge', 'host', 'none'].includes(n.Name)) await docker.getNetwork(n.Id).remove().catch(() => undefined)
      }
    } catch {
      // The engine is gone already (a test killed it): nothing left to remove through it.
    }
    await started.daemon?.stop()
    const netns = join(dir, 'exec', 'netns', 'default')
    if (existsSync(netns)) {
      try { execFileSync('umount', [netns], { stdio: 'ignore' }) } catch { /* not mounted */ }
    }
    rmSync(dir, { recursive: true, force: true })
  }
  return { socket, docker, dir, stop }
}
