// The Docker engine for tests: Debian's docker.io, started once per run and shared by all test files,
// images built locally from busybox-static (never pulled), and a throwaway registry on 127.0.0.1.
import bcrypt from 'bcryptjs'
import Docker from 'dockerode'
import type { Container, ContainerCreateOptions } from 'dockerode'
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureDebianPackages, isRoot, Unavailable } from './component.js'
import { isRunning, runFile, startDaemon, useRunDaemon } from './daemon.js'
import { withLock } from './lock.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

export const DOCKER_SOCKET = '/var/run/docker.sock'
const DOCKER_PIDFILE = '/var/run/docker.pid'
/** busybox-static's /bin/busybox alone; CMD is `busybox sh`. */
export const BUSYBOX_IMAGE = 'berth-test/busybox:2'
/** busybox httpd in the foreground serving /www (HTTPD_INDEX at `/`) on HTTPD_PORT. */
export const HTTPD_IMAGE = 'berth-test/httpd:1'
export const HTTPD_PORT = '8080/tcp'
export const HTTPD_INDEX = '<h1>berth-test httpd</h1>\n'
/** Exposes HTTPD_PORT but listens on nothing, and exits two seconds after it starts: never healthy, restarted by the engine again and again. */
export const NEVER_HEALTHY_IMAGE = 'berth-test/never-healthy:1'

async function answers (docker: Docker): Promise<boolean> {
  try {
    await docker.ping()
    return true
  } catch {
    return false
  }
}

async function startEngine (): Promise<Docker> {
  const docker = new Docker({ socketPath: DOCKER_SOCKET })
  if (await answers(docker)) {
    await useRunDaemon('dockerd')
    return docker
  }
  await ensureDebianPackages(['docker.io'])
  await withLock('dockerd', async () => {
    if (await answers(docker)) {
      await useRunDaemon('dockerd')
      return
    }
    if (!isRoot()) throw new Unavailable(`no Docker daemon answers on ${DOCKER_SOCKET} and only root can start one`)
    removeStalePidfile()
    await startDaemon('run', 'dockerd', {
      command: '/usr/sbin/dockerd',
      args: ['--host', `unix://${DOCKER_SOCKET}`],
      logFile: runFile('dockerd.log'),
      env: { ...process.env, PATH: `/usr/sbin:/usr/bin:/sbin:/bin:${process.env.PATH ?? ''}` },
      ready: async () => await answers(docker),
      timeout: 30_000
    })
  })
  return docker
}

/** dockerd refuses to start while its pidfile names a process that still has a /proc entry, zombies included. */
function removeStalePidfile (): void {
  if (!existsSync(DOCKER_PIDFILE)) return
  const pid = Number(readFileSync(DOCKER_PIDFILE, 'utf8').trim())
  if (!isRunning(pid)) rmSync(DOCKER_PIDFILE, { force: true })
}

let engine: Promise<Docker> | undefined

/**
 * A client for the engine on DOCKER_SOCKET. If none answers, installs docker.io and starts dockerd
 * for the whole run (one process does it; the others wait for it); `teardown.ts` stops it.
 */
export async function dockerEngine (): Promise<Docker> {
  engine ??= startEngine()
  return await engine
}

/** Wait for a progress stream (pull, push, import) to end; reject on any entry carrying `error`. */
export async function completeProgress (docker: Docker, stream: NodeJS.ReadableStream): Promise<unknown[]> {
  const entries = await new Promise<unknown[]>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null, output: unknown[]) => { if (err === null) resolve(output); else reject(err) })
  })
  const failed = entries.find((entry): entry is { error: unknown } => typeof entry === 'object' && entry !== null && 'error' in entry)
  if (failed !== undefined) throw new Error(`docker: ${String(failed.error)}`)
  return entries
}

/** The engine requires an X-Registry-Auth header on push even for a registry without auth. */
const ANONYMOUS = { base64: Buffer.from('{}').toString('base64') }

/** Push `ref` (registry/repo:tag) anonymously; rejects on any error, even one inside the stream. */
export async function pushImage (docker: Docker, ref: string): Promise<void> {
  await completeProgress(docker, await docker.getImage(ref).push({ authconfig: ANONYMOUS }))
}

/** Pull `ref` anonymously; rejects on any error, even one inside the stream. */
export async function pullImage (docker: Docker, ref: string): Promise<void> {
  await completeProgress(docker, await docker.pull(ref))
}

async function hasImage (docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).inspect()
    return true
  } catch {
    return false
  }
}

/** `docker import` of a root directory as `ref` (repo:tag), with Dockerfile-style `changes`. */
async function importRoot (docker: Docker, ref: string, root: string, changes: string[]): Promise<void> {
  const tar = spawn('tar', ['-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let tarErrors = ''
  tar.stderr.on('data', (d: Buffer) => { tarErrors += d.toString() })
  const tarDone = new Promise<number | null>(resolve => tar.on('close', resolve))
  const [repo, tag] = ref.split(':')
  await completeProgress(docker, await docker.importImage(tar.stdout, { repo, tag, changes }))
  const code = await tarDone
  if (code !== 0) throw new Error(`tar of ${root} exited ${code}: ${tarErrors.trim()}`)
}

/** Create `ref` once (across all processes of the run) from the root `fill` lays out; it returns the Dockerfile-style changes. */
export async function ensureImage (docker: Docker, ref: string, fill: (root: string) => string[] | Promise<string[]>): Promise<string> {
  await ensureDebianPackages(['busybox-static'])
  if (await hasImage(docker, ref)) return ref
  await withLock(`image ${ref}`, async () => {
    if (await hasImage(docker, ref)) return
    const root = mkdtempSync(join(tmpdir(), 'berth-image-'))
    try {
      await importRoot(docker, ref, root, await fill(root))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
  return ref
}

function placeBusybox (root: string): void {
  mkdirSync(join(root, 'bin'))
  copyFileSync('/bin/busybox', join(root, 'bin', 'busybox'))
  // /bin/sh, as images have it: commands run in containers (backup hooks) go through `/bin/sh -c`.
  symlinkSync('busybox', join(root, 'bin', 'sh'))
}

/** BUSYBOX_IMAGE, built if missing (installs busybox-static). */
export async function busyboxImage (docker: Docker): Promise<string> {
  return await ensureImage(docker, BUSYBOX_IMAGE, root => {
    placeBusybox(root)
    return ['CMD ["/bin/busybox", "sh"]']
  })
}

/** HTTPD_IMAGE, built if missing (installs busybox-static). */
export async function httpdImage (docker: Docker): Promise<string> {
  return await ensureImage(docker, HTTPD_IMAGE, root => {
    placeBusybox(root)
    mkdirSync(join(root, 'www'))
    writeFileSync(join(root, 'www', 'index.html'), HTTPD_INDEX)
    return [`EXPOSE ${HTTPD_PORT}`, 'CMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]']
  })
}

/** NEVER_HEALTHY_IMAGE, built if missing (installs busybox-static). */
export async function neverHealthyImage (docker: Docker): Promise<string> {
  return await ensureImage(docker, NEVER_HEALTHY_IMAGE, root => {
    placeBusybox(root)
    return [`EXPOSE ${HTTPD_PORT}`, 'CMD ["/bin/busybox", "sh", "-c", "echo starting; sleep 2; exit 1"]']
  })
}

/** Create and start a container, force-removed (with its volumes) when the test ends. */
export async function runContainer (t: Teardown, docker: Docker, options: ContainerCreateOptions): Promise<Container> {
  const container = await docker.createContainer(options)
  t.teardown(async () => { await container.remove({ force: true, v: true }) })
  await container.start()
  return container
}

/** Publish `containerPort` (e.g. '8080/tcp') on a free port of 127.0.0.1: for HostConfig.PortBindings. */
export function loopbackPort (containerPort: string): Record<string, Array<{ HostIp: string, HostPort: string }>> {
  return { [containerPort]: [{ HostIp: '127.0.0.1', HostPort: '' }] }
}

/** The host port on 127.0.0.1 that the engine chose for `containerPort` of a running container. */
export async function publishedPort (container: Container, containerPort: string): Promise<number> {
  const bindings = (await container.inspect()).NetworkSettings.Ports[containerPort] ?? []
  const binding = bindings.find(b => b.HostIp === '127.0.0.1')
  if (binding === undefined) throw new Error(`${containerPort} is not published on 127.0.0.1`)
  return Number(binding.HostPort)
}

export interface Registry {
  /** `127.0.0.1:PORT`: the prefix of image names kept in this registry. */
  host: string
  /** `http://127.0.0.1:PORT` */
  url: string
}

/**
 * A fresh registry (Debian docker-registry) for one test: plain HTTP on 127.0.0.1 (which the engine
 * treats as insecure, so push and pull work), without logins or (`login`) with that one user
 * (htpasswd), deletes enabled, stopped and wiped at test end.
 */
export async function startRegistry (t: Teardown, login?: { user: string, password: string }): Promise<Registry> {
  await ensureDebianPackages(['docker-registry'])
  const dir = tempDir(t, 'berth-registry-')
  const config = join(dir, 'config.yml')
  if (login !== undefined) writeFileSync(join(dir, 'htpasswd'), `${login.user}:${bcrypt.hashSync(login.password, 10)}\n`)
  const auth = login === undefined ? [] : ['auth:', '  htpasswd:', '    realm: berth-test', `    path: ${join(dir, 'htpasswd')}`]
  writeFileSync(config, [
    'version: 0.1',
    'log:',
    '  level: info',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'data')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    // Port 0: the registry says the address it got ("listening on 127.0.0.1:PORT").
    '  addr: 127.0.0.1:0',
    ...auth,
    ''
  ].join('\n'))
  const logFile = join(dir, 'registry.log')
  let host: string | undefined
  await startDaemon(t, 'docker-registry', {
    command: '/usr/bin/docker-registry',
    args: ['serve', config],
    logFile,
    ready: async () => {
      host ??= /msg="listening on (127\.0\.0\.1:\d+)"/.exec(readFileSync(logFile, 'utf8'))?.[1]
      return host !== undefined && (await fetch(`http://${host}/v2/`)).status === (login === undefined ? 200 : 401)
    }
  })
  if (host === undefined) throw new Error('docker-registry did not say where it listens')
  return { host, url: `http://${host}` }
}
