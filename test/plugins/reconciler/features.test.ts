// Service features against the real Docker engine: command, volumes, bind mounts, extra ports,
// resource limits, secrets in the environment only, logs with tail and follow, depends_on order with
// health waits, per-service errors for a missing image or an unknown secret, pull policies, and
// rollouts of several replicas at once.
import t, { type Test } from 'tap'
import type Docker from 'dockerode'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kernel } from '../../../kernel/index.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine, httpdImage } from '../../support/docker.js'
import { capturedLogger } from '../../support/kernel.js'
import { api, instanceContainers, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import { probablyFreePort } from '../../support/net.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Setup { kernel: Kernel, cwd: string, stateDir: string, instance: string, project: string, token: string, lines: () => string }

async function setup (t: Test, engine: Docker, extra: Record<string, unknown> = {}): Promise<Setup> {
  await Promise.all([busyboxImage(engine), httpdImage(engine)])
  const stateDir = tempDir(t)
  const { logger, lines } = capturedLogger('trace')
  return { ...await reconcilerKernel(t, engine, { stateDir, logger, extra }), stateDir, lines }
}

const SECRET = 'v3ry-s3cret-7f2a'

if (docker !== undefined) {
  t.test('command, volumes, bind mounts, extra ports, limits; secrets only in the environment', async t => {
    const { kernel, cwd, stateDir, instance, project, token, lines } = await setup(t, docker, { allowed_host_paths: ['services'] })
    const extraPort = await probablyFreePort()
    mkdirSync(join(cwd, 'services', project, 'www'), { recursive: true })
    writeFileSync(join(cwd, 'services', project, 'www', 'index.html'), 'served from a bind mount\n')
    t.equal((await api(kernel, 'PUT', '/api/v1/secrets/API_TOKEN', { token, body: { value: SECRET } })).status, 201)
    writeServices(cwd, {
      [project]: `
[[service]]
name = "site"
image = "berth-test/httpd:1"
port = 8080
extra_ports = ["${extraPort}:8080"]
[[service.mounts]]
source = "services/${project}/www"
target = "/www"
read_only = true
[[service.volumes]]
source = "data"
target = "/data"
[service.resources]
memory = "64m"
cpu = 0.5
[service.env]
AUTH = "Bearer \${secrets.API_TOKEN}"

[[service]]
name = "broken"
image = "berth-test/busybox:2"
[service.env]
PASSWORD = "\${secrets.MISSING}"
`
    })
    const deployed = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(deployed.body.deployed, ['site'])
    t.same(deployed.body.errors, [{
      service: 'broken', project, error: `service "broken": env.PASSWORD refers to unknown secret "MISSING" (set it with: berth secrets set MISSING <value> --project ${project})`
    }], 'an unknown secret fails that service only, naming it and the secret')

    const page = await pollUntil(async () => {
      const response = await fetch(`http://127.0.0.1:${extraPort}/`)
      return response.ok && await response.text()
    }, { what: 'the site on its extra port' })
    t.equal(page, 'served from a bind mount\n', 'the extra port is published and the bind mount is served')

    const info = await docker.getContainer(`${project}-site-1`).inspect()
    t.same(info.HostConfig.PortBindings?.['8080/tcp'], [{ HostIp: '127.0.0.1', HostPort: '' }, { HostIp: '127.0.0.1', HostPort: String(extraPort) }], 'both on 127.0.0.1')
    t.equal(info.HostConfig.Memory, 64 * 1024 * 1024)
    t.equal(info.HostConfig.NanoCpus, 500_000_000)
    t.match([...info.Mounts].sort((a, b) => a.Destination.localeCompare(b.Destination)), [
      { Type: 'volume', Name: `${project}_data`, Destination: '/data' },
      { Type: 'bind', Source: join(cwd, 'services', project, 'www'), Destination: '/www', RW: false }
    ], 'the named volume (project-scoped) and the read-only bind mount')
    t.ok(info.Config.Env.includes(`AUTH=Bearer ${SECRET}`), 'the secret is in the container environment')
    t.notOk(JSON.stringify(info.Config.Labels).includes(SECRET), 'and not in its labels')
    const status = await api(kernel, 'GET', '/api/v1/status', { token })
    t.notOk(status.text.includes(SECRET), 'nor in the status')
    t.notOk(deployed.text.includes(SECRET), 'nor in the deploy answer')
    await kernel.stop()
    t.notOk(lines().includes(SECRET), 'nor in the log (trace level)')
    t.notOk(readFileSync(join(stateDir, 'berth.mdb')).includes(SECRET), 'nor in plaintext in the state')
    t.ok((await instanceContainers(docker, instance)).has(`${project}-site-1`), 'containers outlive the server')
  })

  t.test('logs: tail (with the configured default), stderr included, several replicas, follow', async t => {
    const { kernel, cwd, project, token } = await setup(t, docker, { logs_tail: 1 })
    writeServices(cwd, {
      [project]: '[[service]]\nname = "talker"\nimage = "berth-test/busybox:2"\nreplicas = 2\n' +
        'command = ["/bin/busybox", "sh", "-c", "echo one >&2; echo two >&2; echo three >&2; exec /bin/busybox sleep 3600"]\n'
    })
    t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
    const logs = async (query: string): Promise<string> => (await api<string>(kernel, 'GET', `/api/v1/services/talker/logs${query}`, { token })).text
    const two = await pollUntil(async () => { const text = await logs('?tail=2'); return text.split('\n').length === 5 && text }, { what: 'two lines of each replica' })
    t.equal(two, `${project}-talker-1 | two\n${project}-talker-1 | three\n${project}-talker-2 | two\n${project}-talker-2 | three\n`)
    t.equal(await logs(''), `${project}-talker-1 | three\n${project}-talker-2 | three\n`, 'the default tail is [reconciler].logs_tail')
    const answer = await api(kernel, 'GET', '/api/v1/services/talker/logs?tail=x', { token })
    t.same([answer.status, answer.body], [400, { error: 'tail must be an integer from 0 to 100000, got "x"', code: 'BERTH_BAD_REQUEST' }])
    t.equal((await api(kernel, 'GET', '/api/v1/services/nobody/logs', { token })).status, 404)

    const controller = new AbortController()
    const response = await fetch(new URL('/api/v1/services/talker/logs?tail=1&follow=true', kernel.url('control')), { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
    t.match(response.headers.get('content-type'), /^text\/plain/)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let followed = ''
    while (followed.split('\n').length < 3) followed += Buffer.from((await reader.read()).value ?? []).toString()
    t.same(followed.split('\n').sort(), ['', `${project}-talker-1 | three`, `${project}-talker-2 | three`], 'follow sends what is there and stays open')
    controller.abort()
  })

  t.test('depends_on: dependencies boot first and are waited for; a failing one holds back its dependants', async t => {
    const { kernel, cwd, instance, project, token } = await setup(t, docker, { health_timeout_secs: 8 })
    const httpd = (name: string, health: string, dependsOn: string[]): string =>
      `[[service]]\nname = "${name}"\nimage = "berth-test/httpd:1"\nport = 8080\nhealth = "${health}"\ndepends_on = ${JSON.stringify(dependsOn)}\n`
    writeServices(cwd, {
      [project]: httpd('c', '/', ['b']) + httpd('b', '/', ['a']) + httpd('a', '/', []),
      [`${project}x`]: httpd('x', '/missing', []) + httpd('y', '/', ['x']) + '[[service]]\nname = "z"\nimage = "127.0.0.1:1/none:1"\n'
    })
    const result = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(result.body.deployed, ['c', 'b', 'a'])
    t.same(result.body.errors, [
      { service: 'z', project: `${project}x`, error: result.body.errors[0]?.error },
      { service: 'x', project: `${project}x`, error: 'health check /missing did not pass within 8 s' },
      { service: 'y', project: `${project}x`, error: 'not started: it depends on "x", which failed' }
    ])
    t.match(result.body.errors[0]?.error, /^pulling 127\.0\.0\.1:1\/none:1: /, 'a missing image is an error of its service')
    const started = async (name: string): Promise<number> => Date.parse((await docker.getContainer(`${project}-${name}-1`).inspect()).State.StartedAt)
    const [a, b, c] = [await started('a'), await started('b'), await started('c')]
    t.ok(a < b && b < c, `a, b, c started in order (${a}, ${b}, ${c})`)
    t.notOk((await instanceContainers(docker, instance)).has(`${project}x-y-1`), 'y was never created')
  })

  t.test('pull policy per service: "missing" redeploys an image only this host has, "never" refuses one it lacks', async t => {
    const { kernel, cwd, project, token } = await setup(t, docker)
    const service = (name: string, image: string, pull: string): string =>
      `[[service]]\nname = "${name}"\nimage = "${image}"\ncommand = ["/bin/busybox", "sleep", "3600"]\npull = "${pull}"\n`
    writeServices(cwd, { [project]: service('local', 'berth-test/busybox:2', 'missing') + service('absent', 'berth-test/absent:1', 'never') })
    const deployed = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(deployed.body.deployed, ['local'])
    t.same(deployed.body.errors, [{ service: 'absent', project, error: 'its image berth-test/absent:1 is not on this node and its pull policy is "never": build or load it here first' }])
    // A redeploy pulls by default; this image is in no registry, and "missing" uses the one here.
    const redeployed = await api<DeployResult>(kernel, 'POST', '/api/v1/services/local/redeploy', { token })
    t.same([redeployed.status, redeployed.body.errors, redeployed.body.changed], [200, [], ['local']])
    writeServices(cwd, { [project]: service('local', 'berth-test/busybox:2', 'sometimes') })
    t.match(await api(kernel, 'POST', '/api/v1/deploy', { token }), { status: 400, body: { error: /pull .*"always", "missing" or "never"/ } }, 'another value is refused')
  })

  t.test('max_parallel: a rollout replaces that many replicas at once, each batch checked before the next', async t => {
    const { kernel, cwd, project, token, instance } = await setup(t, docker)
    const service = (version: string, parallel: number): string =>
      `[[service]]\nname = "many"\nimage = "berth-test/busybox:2"\ncommand = ["/bin/busybox", "sleep", "3600"]\nreplicas = 4\nmax_parallel = ${parallel}\nenv = { V = "${version}" }\n`
    /** Containers of the service alive at the lowest point of a rollout to `version`, from the engine's events. */
    const lowest = async (version: string, parallel: number): Promise<number> => {
      writeServices(cwd, { [project]: service(version, parallel) })
      const since = Math.floor(Date.now() / 1000)
      t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
      const events = await docker.getEvents({ since, until: Math.floor(Date.now() / 1000) + 1, filters: { type: ['container'], event: ['create', 'destroy'], label: [`berth.instance=${instance}`] } })
      const lines = (await new Promise<string>(resolve => { let text = ''; events.on('data', (d: Buffer) => { text += d.toString() }); events.on('end', () => { resolve(text) }) })).trim().split('\n')
      let alive = 4
      let low = 4
      for (const { Action } of lines.map(line => JSON.parse(line) as { Action: string })) {
        alive += Action === 'create' ? 1 : -1
        low = Math.min(low, alive)
      }
      return low
    }
    writeServices(cwd, { [project]: service('1', 1) })
    t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
    t.equal(await lowest('2', 1), 3, 'one at a time with max_parallel = 1 (the default)')
    t.equal(await lowest('3', 2), 2, 'two at a time with max_parallel = 2')
  })
}
