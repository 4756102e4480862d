// Admission of service specs: each rule refused and allowed on its own (host paths with their links
// resolved, host ports, git sources, build contexts and the links inside them), then through the API
// on the stand-in engine (test/support/fake-engine.ts; admission is the subject, not Docker): a
// deployer's refused spec is a 403 naming the field and no container is created; an allowed mount is
// created with the container (that Docker serves a bind mount is features.test.ts's); a stored spec
// refused after the rules narrowed is not created again by repairs.
import t from 'tap'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Admission, parsePortRange, type AdmissionRules } from '../../../plugins/reconciler/admission.js'
import { contextFiles } from '../../../plugins/reconciler/build-context.js'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'
import { BUSYBOX_IMAGE as image } from '../../support/docker.js'
import { busyboxEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel, tokenFor, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const spec = (extra: Partial<ServiceSpec> = {}): ServiceSpec => ({
  name: 'web', project: 'p', image: 'x:1', runtime: 'docker', replicas: 1, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false, ...extra
})
const mount = (source: string): Partial<ServiceSpec> => ({ mounts: [{ source, target: '/m', read_only: false }] })
/** Rules with nothing allowed and no secrets but `overrides`. */
const rules = (cwd: string, overrides: Partial<AdmissionRules> = {}): AdmissionRules => ({
  allowedHostPaths: [], hostPorts: undefined, listenerPorts: () => [], protectedPaths: [], cwd, secretVisibility: () => 'missing', ...overrides
})

t.test('host paths: only under the allowed folders, never Berth\'s state, the engine\'s socket or the system', async t => {
  const cwd = tempDir(t)
  const stateDir = join(cwd, '.berth')
  const allowed = join(cwd, 'data')
  mkdirSync(join(allowed, 'site'), { recursive: true })
  mkdirSync(stateDir)
  symlinkSync(stateDir, join(allowed, 'sneaky'))
  const base = rules(cwd, { allowedHostPaths: ['data'], protectedPaths: [stateDir, '/var/run/docker.sock'] })
  const admission = new Admission(base)
  t.same(admission.problems(spec(mount(join(allowed, 'site'))), 'services/p/service.toml'), [], 'inside an allowed folder')
  t.same(admission.problems(spec(mount(join(allowed, 'not-yet'))), 'services/p/service.toml'), [], 'a folder not made yet, inside an allowed one')
  const refused = (source: string): string => admission.problems(spec(mount(source)), 'services/p/service.toml').join('\n')
  t.match(refused(stateDir), /^mounts\[0\]\.source ".*\.berth" is, holds or is inside .*\.berth, which no service may reach$/, 'the state directory')
  t.match(refused(join(allowed, 'sneaky', 'admin.token')), /is, holds or is inside .*\.berth/, 'the state directory through a link in an allowed folder')
  t.match(refused('/'), /is, holds or is inside \//, 'the root')
  t.match(refused('/var/run/docker.sock'), /is, holds or is inside \/(var\/)?run/, 'the engine\'s socket')
  t.match(refused('/etc'), /is, holds or is inside \/etc/, 'a system folder')
  t.match(refused(join(cwd, 'elsewhere')), /is not inside a folder of \[reconciler\]\.allowed_host_paths/, 'outside the allowed folders')
  t.match(refused(cwd), /holds .*\.berth/, 'a folder holding the state directory, even were it allowed')
  const wide = new Admission({ ...base, allowedHostPaths: ['/'] })
  t.match(wide.problems(spec(mount('/var/lib/docker/volumes')), 'request body').join(), /is, holds or is inside \/var\/lib\/docker/, 'the engine\'s data, whatever the list says')
  const none = new Admission({ ...base, allowedHostPaths: [] })
  t.match(none.problems(spec(mount(join(allowed, 'site'))), 'request body').join(), /no host paths are allowed \(\[reconciler\]\.allowed_host_paths is empty; named volumes are\)/, 'none by default')
  t.same(none.problems(spec({ volumes: [{ source: 'data', target: '/data' }] }), 'request body'), [], 'named volumes always')
})

t.test('host ports: inside the declared range, never a listener\'s', async t => {
  const cwd = tempDir(t)
  const admission = new Admission(rules(cwd, { hostPorts: { first: 20000, last: 20100 }, listenerPorts: () => [20050] }))
  const ports = (host: number): string[] => admission.problems(spec({ extra_ports: [{ host, container: 80 }] }), 'request body')
  t.same(ports(20001), [])
  t.same(ports(22), ['extra_ports[0] "22:80": host port 22 is outside 20000-20100 ([reconciler].host_ports)'])
  t.same(ports(20050), ['extra_ports[0] "20050:80": host port 20050 is a Berth listener\'s'])
  const closed = new Admission(rules(cwd))
  t.same(closed.problems(spec({ extra_ports: [{ host: 20001, container: 80 }] }), 'request body'), ['extra_ports[0] "20001:80": no host ports may be published ([reconciler].host_ports is empty)'])
  t.same(parsePortRange('1024-65535'), { first: 1024, last: 65535 })
  t.equal(parsePortRange(''), undefined, 'empty: none')
  t.match(parsePortRange('9000-80'), /host_ports must be "<first>-<last>"/)
})

t.test('secrets: a service uses its project\'s and those shared with it, never another project\'s', async t => {
  const visibility = { OWN: 'visible', SHARED: 'visible', THEIRS: 'hidden', NONE: 'missing' } as const
  const admission = new Admission(rules(tempDir(t), { secretVisibility: name => visibility[name as keyof typeof visibility] }))
  const env = (value: string): string[] => admission.problems(spec({ env: { V: value } }), 'request body')
  t.same(env('${secrets.OWN}:${secrets.SHARED}'), [], 'its own and a shared one')
  t.same(env('x${secrets.THEIRS}'), ['env.V refers to secret "THEIRS", which is another project\'s and not shared with project "p"'])
  t.same(env('${secrets.NONE}'), [], 'one that does not exist fails at the container, as before')
})

t.test('build sources: git transports, local repositories, contexts and their links', async t => {
  const cwd = tempDir(t)
  mkdirSync(join(cwd, 'repos', 'app'), { recursive: true })
  mkdirSync(join(cwd, 'services', 'p', 'app'), { recursive: true })
  mkdirSync(join(cwd, 'secret-place'))
  symlinkSync(join(cwd, 'secret-place'), join(cwd, 'services', 'p', 'linked'))
  const admission = new Admission(rules(cwd, { allowedHostPaths: ['repos'], protectedPaths: [join(cwd, '.berth')] }))
  const git = (url: string): string[] => admission.problems(spec({ build: { context: '.', git: url, ref: 'HEAD', dockerfile: 'Dockerfile', args: {} } }), 'request body')
  t.same(git('https://git.example.com/app.git'), [], 'https')
  t.same(git('git@git.example.com:team/app.git'), [], 'scp-like ssh')
  t.same(git(`file://${join(cwd, 'repos', 'app')}`), [], 'a local repository under an allowed folder')
  t.match(git(`file://${join(cwd, '.berth')}`).join(), /^build\.git "file:\/\/.*\.berth" is, holds or is inside/, 'file:// of the state directory')
  t.match(git('/etc').join(), /^build\.git "\/etc" is, holds or is inside \/etc/, 'a local path')
  t.match(git(join(cwd, 'secret-place')).join(), /is not inside a folder of \[reconciler\]\.allowed_host_paths/, 'a local path outside the allowed folders')
  t.match(git('ext::sh -c id').join(), /uses a transport Berth does not fetch with/, 'ext:: runs a command: refused')
  const context = (path: string, source: string): string[] => admission.problems(spec({ build: { context: path, dockerfile: 'Dockerfile', args: {} } }), source)
  t.same(context(join(cwd, 'services', 'p', 'app'), 'services/p/service.toml'), [], 'inside the service file\'s folder')
  t.match(context(join(cwd, 'secret-place'), 'services/p/service.toml').join(), /^build\.context ".*secret-place" leaves the service file's folder/, 'an absolute context elsewhere')
  t.match(context(join(cwd, 'services', 'p', 'linked'), 'services/p/service.toml').join(), /leaves the service file's folder .* \(through a symlink, to .*secret-place\)/, 'a link out of the folder')
  t.match(context(join(cwd, 'services', 'p', 'app'), 'request body').join(), /is not inside a folder of \[reconciler\]\.allowed_host_paths/, 'a request\'s context: only an allowed host folder')

  const dir = join(cwd, 'services', 'p', 'app')
  writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\n')
  symlinkSync('Dockerfile', join(dir, 'inside-link'))
  t.same(contextFiles(dir), ['Dockerfile', 'inside-link'], 'a link inside the context is a file of it')
  symlinkSync('../../../../secret-place', join(dir, 'outside-link'))
  t.throws(() => contextFiles(dir), /outside-link is a symlink to .*secret-place, outside the context/, 'a link leaving the context is refused')
})

t.test('through the API: a deployer\'s refused spec is a 403 naming the field, and no container is made (stand-in engine)', async t => {
  const engine = busyboxEngine()
  const { kernel, cwd, project, token } = await reconcilerKernel(t, engine, { extra: { allowed_host_paths: ['shared'] } })
  const deployer = await tokenFor(kernel, 'deployer')
  mkdirSync(join(cwd, 'shared'))
  writeFileSync(join(cwd, 'shared', 'note.txt'), 'allowed\n')
  const service = (mounts: unknown[], extra: Record<string, unknown> = {}): unknown => ({
    services: [{ name: 'reader', project, image, command: ['/bin/busybox', 'sleep', '300'], mounts, ...extra }]
  })
  for (const [source, what] of [[kernel.config.stateDir, 'the state directory'], ['/', 'the root'], ['/var/run/docker.sock', 'the engine\'s socket'], [join(cwd, 'elsewhere'), 'a folder not allowed']] as const) {
    const answer = await api<{ error: string, code: string }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service([{ source, target: '/st' }]) })
    t.equal(answer.status, 403, `${what}: ${answer.text}`)
    t.equal(answer.body.code, 'BERTH_SPEC_REFUSED')
    t.match(answer.body.error, /^refused by admission: request body: service "reader": mounts\[0\]\.source /, 'names the service and the field')
  }
  const port = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service([], { extra_ports: [`${kernel.url('control').port}:80`] }) })
  t.same([port.status, port.body.error.replace(/\d{4,5}:80/, 'N:80').replace(/port \d+/, 'port N')], [403, 'refused by admission: request body: service "reader": extra_ports[0] "N:80": host port N is a Berth listener\'s'], 'the control listener\'s port')
  const refusedFor = async (extra: Record<string, unknown>): Promise<string> => {
    const answer = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service([], extra) })
    return `${answer.status} ${answer.body.error}`
  }
  t.match(await refusedFor({ extra_ports: ['80:80'] }), /^403 .*extra_ports\[0\] "80:80": host port 80 is outside 1024-65535/, 'a privileged host port')
  t.match(await refusedFor({ image: undefined, build: { context: kernel.config.stateDir } }), /^403 .*build\.context ".*" is, holds or is inside/, 'a request\'s build context in the state directory')
  t.match(await refusedFor({ image: undefined, build: { git: `file://${kernel.config.stateDir}` } }), /^403 .*build\.git "file:\/\/.*" is, holds or is inside/, 'a git source in the state directory')
  const asAdmin = await api(kernel, 'POST', '/api/v1/deploy', { token, body: service([{ source: kernel.config.stateDir, target: '/st' }]) })
  t.equal(asAdmin.status, 403, 'an admin\'s token is refused the state directory too')
  t.equal(engine.containers().size, 0, 'no container was created')

  const allowed = await api<{ errors: unknown[] }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service([{ source: join(cwd, 'shared'), target: '/shared', read_only: true }]) })
  t.same([allowed.status, allowed.body.errors], [200, []], allowed.text)
  const containers = [...engine.containers().values()]
  t.same(containers.map(c => [c.name, c.state, c.spec.mounts]), [[`${project}-reader-1`, 'running', [{ source: join(cwd, 'shared'), target: '/shared', read_only: true }]]], 'the allowed folder is mounted, read-only')

  // A file of the folder the service file is in is its build context; a link out of it is not.
  writeServices(cwd, { [project]: '[[service]]\nname = "built"\n[service.build]\ncontext = "app"\n' })
  symlinkSync(kernel.config.stateDir, join(cwd, 'services', project, 'app'))
  const built = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy?service=built', { token: deployer })
  t.equal(built.status, 403, built.text)
  t.match(built.body.error, /build\.context ".*app" leaves the service file's folder .* \(through a symlink, to .*\)/, 'the link is followed before the check')
})

t.test('a deployed spec the narrowed rules refuse is not created again by repairs (stand-in engine)', async t => {
  const engine = busyboxEngine()
  const first = await reconcilerKernel(t, engine, { extra: { allowed_host_paths: ['shared'] } })
  mkdirSync(join(first.cwd, 'shared'))
  const body = { services: [{ name: 'holder', project: first.project, image, command: ['/bin/busybox', 'sleep', '300'], mounts: [{ source: join(first.cwd, 'shared'), target: '/shared' }] }] }
  t.equal((await api(first.kernel, 'POST', '/api/v1/deploy', { token: first.token, body })).status, 200)
  await first.kernel.stop()
  const [container] = [...engine.containers().values()]
  t.equal(container?.name, `${first.project}-holder-1`, 'the holder was created')
  await engine.removeByHand(container.id)
  const narrowed = await reconcilerKernel(t, engine, { restartOf: first, extra: { allowed_host_paths: [], repair_interval_secs: 1 } })
  const failure = await pollUntil(async () => {
    const answer = await api<{ services: Array<{ name: string, reason?: string }> }>(narrowed.kernel, 'GET', '/api/v1/status', { token: narrowed.token })
    return answer.body.services.find(s => s.name === 'holder')?.reason?.match(/mounts\[0\]\.source .*/)?.[0]
  }, { timeout: 15_000, what: 'the refused repair in the status' })
  t.match(failure, /mounts\[0\]\.source .* no host paths are allowed/, 'the repair names the rule')
  t.equal(engine.containers().size, 0, 'and creates nothing')
})
