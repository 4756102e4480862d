// What the reconciler relies on from a container engine, as one list of behaviours run twice: against
// the real Docker engine (DockerEngine) and against the in-memory stand-in (test/support/fake-engine.ts),
// so that what tests on the stand-in prove holds on Docker. Labels in the list, states after stop,
// start and a crash, errors for missing containers and images, failed starts, named volumes, pulls, events in order,
// addresses that serve, stats, and an engine that does not answer.
import t, { type Test } from 'tap'
import type Docker from 'dockerode'
import { EngineFailed, EngineUnavailable, type ContainerEngine, type ContainerEvent } from '../../../plugins/reconciler/container-engine.js'
import { DockerEngine } from '../../../plugins/reconciler/docker-engine.js'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, DOCKER_SOCKET, dockerEngine, HTTPD_INDEX, httpdImage } from '../../support/docker.js'
import { FAKE_HTTPD, FAKE_IDLE, FakeEngine } from '../../support/fake-engine.js'
import { inRegistry, removeInstanceAtEnd, testInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

/** One engine under test, with what each behaviour needs of it. */
interface Subject {
  /** The engine, serving one instance label. */
  engine: ContainerEngine
  /** The same engine serving another instance label. */
  other: ContainerEngine
  /** An engine of the same kind that cannot be reached. */
  away: ContainerEngine
  /** A local image whose containers serve HTTPD_INDEX at `/` on port 8080. */
  httpd: string
  /** An image put in a registry, not present locally. */
  pullable: () => Promise<string>
  /** A spec whose container cannot start. */
  unstartable: (spec: ServiceSpec) => ServiceSpec
  /** The container's process dies (not a stop asked of the engine). */
  crash: (id: string) => Promise<void>
}

let project = 0
function spec (image: string, extra: Partial<ServiceSpec> = {}): ServiceSpec {
  return { name: 'web', project: `conf${++project}`, image, runtime: 'docker', replicas: 1, port: 8080, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false, ...extra }
}

/** The engine's events from now, collected until the test ends. */
async function watch (t: Test, engine: ContainerEngine): Promise<ContainerEvent[]> {
  const seen: ContainerEvent[] = []
  const abort = new AbortController()
  t.teardown(() => { abort.abort() })
  const events = await engine.events({ signal: abort.signal })
  void (async () => { for await (const e of events) seen.push(e) })()
  return seen
}

/** The actions of `seen`, in order, that are among `actions`. */
function actions (seen: ContainerEvent[], ...wanted: string[]): string[] {
  return seen.map(e => e.action).filter(a => wanted.includes(a))
}

async function get (address: { host: string, port: number } | undefined): Promise<string> {
  if (address === undefined) throw new Error('no address')
  const response = await fetch(`http://${address.host}:${address.port}/`)
  return await response.text()
}

function behaviours (name: string, subject: (t: Test) => Promise<Subject | undefined>): void {
  t.test(name, async t => {
    t.test('list: only this instance\'s containers, with the labels they were created with, running and published', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const web = spec(s.httpd)
      const id = await s.engine.create({ spec: web, replica: 2, hash: 'h1', env: { A: '1' } })
      const canary = await s.engine.create({ spec: web, replica: 0, hash: 'h2', env: {}, canary: true })
      await s.other.create({ spec: spec(s.httpd), replica: 1, hash: 'x', env: {} })
      const listed = await s.engine.list()
      t.same(listed.map(c => c.id).sort(), [id, canary].sort(), 'another instance\'s container is not listed')
      const replica = listed.find(c => c.id === id)
      t.match(replica, { runtime: 'docker', name: `${web.project}-web-2`, service: 'web', project: web.project, replica: 2, hash: 'h1', running: true, state: 'running', imageId: /^sha256:/ })
      t.equal(replica?.canary, undefined, 'a numbered replica is no canary')
      t.match(listed.find(c => c.id === canary), { name: `${web.project}-web-canary`, canary: true, replica: 0, hash: 'h2' })
      t.equal(replica?.health, undefined, 'no health without a healthcheck')
      t.equal(await get(replica?.address), HTTPD_INDEX, 'its address serves')
      t.same(await s.engine.address(id, 8080), replica?.address, 'address() says the same')
      t.equal((await s.engine.localImages()).get(s.httpd), replica?.imageId, 'the image id is the local image\'s')
    })

    t.test('stop, start, restart, remove: the states the list shows, and what is done twice is no error', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const id = await s.engine.create({ spec: spec(s.httpd), replica: 1, hash: 'h', env: {} })
      await s.engine.stop(id)
      t.match((await s.engine.list())[0], { id, running: false, state: 'exited' }, 'stopped: exited')
      t.equal((await s.engine.list())[0].address, undefined, 'no address when not running')
      t.equal(await s.engine.stats(id, { sampled: false }), undefined, 'no stats when not running')
      await s.engine.stop(id)
      t.pass('stopping a stopped container is no error')
      await s.engine.start(id)
      await s.engine.start(id)
      t.match((await s.engine.list())[0], { id, running: true, state: 'running' }, 'started again, the same container')
      t.equal(await get((await s.engine.list())[0].address), HTTPD_INDEX)
      await s.engine.restart(id)
      t.match((await s.engine.list())[0], { id, running: true })
      t.match(await s.engine.stats(id, { sampled: false }), { cpu_percent: null, restarts: 0, memory_limit_bytes: Number }, 'stats of a running container')
      await s.engine.remove(id)
      t.same(await s.engine.list(), [], 'removed')
      await s.engine.remove(id)
      t.pass('removing a removed container is no error')
    })

    t.test('errors: a missing container, a missing image, a taken name, a container that cannot start, an unpause of one not paused', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const missing = 'f'.repeat(64)
      await t.rejects(s.engine.start(missing), EngineFailed, 'start of a missing container')
      await t.rejects(s.engine.stop(missing), EngineFailed, 'stop of a missing container')
      await t.rejects(s.engine.restart(missing), EngineFailed, 'restart of a missing container')
      await t.rejects(s.engine.address(missing, 8080), EngineFailed, 'address of a missing container')
      const nowhere = spec('berth-test/nowhere:1')
      await t.rejects(s.engine.create({ spec: nowhere, replica: 1, hash: 'h', env: {} }), { constructor: EngineFailed, message: /^creating .*-web-1: .*berth-test\/nowhere:1/ }, 'a missing image')
      await t.rejects(s.engine.pull('berth-test/nowhere:1'), { constructor: EngineFailed, message: /^pulling berth-test\/nowhere:1: / }, 'a pull of an image no registry has')
      const web = spec(s.httpd)
      const id = await s.engine.create({ spec: web, replica: 1, hash: 'h', env: {} })
      await t.rejects(s.engine.create({ spec: web, replica: 1, hash: 'h', env: {} }), { constructor: EngineFailed, message: /^creating .*-web-1: .*already in use/ }, 'a taken name')
      await t.rejects(s.engine.unpause(id), EngineFailed, 'an unpause of a running container')
      const broken = s.unstartable(spec(s.httpd))
      await t.rejects(s.engine.create({ spec: broken, replica: 1, hash: 'h', env: {} }), { constructor: EngineFailed, message: new RegExp(`^starting ${broken.project}-web-1: `) }, 'a container that cannot start')
      t.same((await s.engine.list()).map(c => c.id), [id], 'and is removed again')
    })

    t.test('named volumes: a container\'s exist once it is created, as <project>_<source>, and outlive it', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const web = spec(s.httpd, { volumes: [{ source: `data-${testInstance().slice(-10)}`, target: '/data' }] })
      const volume = `${web.project}_${web.volumes[0].source}`
      t.notOk(await s.engine.hasVolume(volume), 'none before')
      const id = await s.engine.create({ spec: web, replica: 1, hash: 'h', env: {} })
      t.ok(await s.engine.hasVolume(volume), 'created with the container')
      await s.engine.remove(id)
      t.ok(await s.engine.hasVolume(volume), 'kept when the container is removed')
    })

    t.test('pull: an image of the registry becomes local', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const ref = await s.pullable()
      t.notOk((await s.engine.localImages()).has(ref), 'not local before')
      await s.engine.pull(ref)
      t.match((await s.engine.localImages()).get(ref), /^sha256:/, 'local after')
    })

    t.test('events: create and start, then kill, die and stop, then destroy, in that order and of this instance only', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const seen = await watch(t, s.engine)
      const id = await s.engine.create({ spec: spec(s.httpd), replica: 1, hash: 'h', env: {} })
      await s.other.create({ spec: spec(s.httpd, { name: 'other' }), replica: 1, hash: 'h', env: {} })
      await s.engine.stop(id)
      await s.engine.remove(id)
      await pollUntil(() => seen.some(e => e.action === 'destroy'), { what: 'the destroy event' })
      t.same(actions(seen, 'create', 'start', 'die', 'stop', 'destroy'), ['create', 'start', 'die', 'stop', 'destroy'])
      t.ok(seen.every(e => e.service === 'web'), 'the other instance\'s events are not seen')
      t.ok(seen.every(e => Math.abs(e.time - Date.now() / 1000) < 60), 'times in seconds since the epoch')
    })

    t.test('a crash: die, then the engine starts a container of restart policy unless-stopped again, and counts it', async t => {
      const s = await subject(t)
      if (s === undefined) return
      const seen = await watch(t, s.engine)
      const id = await s.engine.create({ spec: spec(s.httpd), replica: 1, hash: 'h', env: {} })
      await s.crash(id)
      await pollUntil(async () => actions(seen, 'start').length === 2 && (await s.engine.list())[0]?.running, { what: 'the engine to start it again' })
      t.same(actions(seen, 'start', 'die'), ['start', 'die', 'start'])
      t.match(await s.engine.stats(id, { sampled: false }), { restarts: 1 })
      t.equal(await get((await s.engine.list())[0].address), HTTPD_INDEX, 'it serves again')
    })

    t.test('an engine that cannot be reached: EngineUnavailable', async t => {
      const s = await subject(t)
      if (s === undefined) return
      await t.rejects(s.away.list(), EngineUnavailable)
      await t.rejects(s.away.info(), EngineUnavailable)
      await t.rejects(s.away.events({ signal: new AbortController().signal }), EngineUnavailable)
    })
  })
}

behaviours('Docker', async t => {
  const docker = await requireComponent(t, 'docker', dockerEngine)
  if (docker === undefined) return undefined
  const settings = { socket: DOCKER_SOCKET, publish_address: '127.0.0.1', network: 'berth-test', stop_timeout_secs: 0, credentials_file: '/nonexistent' }
  const view = (instance: string): DockerEngine => {
    removeInstanceAtEnd(t, docker, instance)
    return new DockerEngine({ ...settings, instance })
  }
  const [httpd] = await Promise.all([httpdImage(docker), busyboxImage(docker)])
  return {
    engine: view(testInstance()),
    other: view(testInstance()),
    away: new DockerEngine({ ...settings, socket: '/nonexistent/docker.sock', instance: testInstance() }),
    httpd,
    pullable: async () => await pulledAway(t, docker, httpd),
    unstartable: s => ({ ...s, command: ['/no/such/binary'] }),
    crash: async id => { process.kill((await docker.getContainer(id).inspect()).State.Pid, 'SIGKILL') }
  }
})

/** `image` in a fresh local registry, and its reference there no longer local. */
async function pulledAway (t: Test, docker: Docker, image: string): Promise<string> {
  const ref = await inRegistry(t, docker, image)
  await docker.getImage(ref).remove()
  return ref
}

behaviours('the stand-in engine', async t => {
  const engine = new FakeEngine({ instance: testInstance(), images: { 'berth-test/httpd:1': FAKE_HTTPD, 'berth-test/broken:1': FAKE_IDLE } })
  t.teardown(async () => { await engine.close() })
  engine.failStarts('berth-test/broken:1')
  return {
    engine,
    other: new FakeEngine({ instance: testInstance(), of: engine }),
    away: (() => { const away = new FakeEngine(); away.goAway(); return away })(),
    httpd: 'berth-test/httpd:1',
    pullable: async () => {
      engine.publish('127.0.0.1:5000/berth-test/httpd:1', FAKE_HTTPD)
      return '127.0.0.1:5000/berth-test/httpd:1'
    },
    unstartable: s => ({ ...s, image: 'berth-test/broken:1' }),
    crash: async id => { await engine.crash(id) }
  }
})
