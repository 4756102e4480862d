// Deploys. Against the real Docker engine: only changed services are recreated, a service gone from
// the files is removed, ports are published on 127.0.0.1, the cluster info names the engine, and the
// status reports it all. On the stand-in engine (test/support/fake-engine.ts; the reconciler's
// bookkeeping is the subject, not Docker): replicas scale up and down, restart, stop and delete, and
// orphans of deploy requests are removed only when pruning.
import t, { type Test } from 'tap'
import type Docker from 'dockerode'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine, HTTPD_INDEX, httpdImage } from '../../support/docker.js'
import { busyboxEngine } from '../../support/fake-engine.js'
import { api, instanceContainers, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import type { Kernel } from '../../../kernel/index.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Setup { kernel: Kernel, cwd: string, instance: string, token: string }

async function setup (t: Test, engine: Docker): Promise<Setup> {
  await Promise.all([busyboxImage(engine), httpdImage(engine)])
  const { kernel, cwd, instance, token } = await reconcilerKernel(t, engine)
  return { kernel, cwd, instance, token }
}

const sleeper = (name: string, extra = ''): string =>
  `[[service]]\nname = "${name}"\nimage = "berth-test/busybox:2"\ncommand = ["/bin/busybox", "sleep", "3600"]\n${extra}\n`

if (docker !== undefined) {
  t.test('deploy, change one field of one service, redeploy: exactly that service changes', async t => {
    const { kernel, cwd, instance, token } = await setup(t, docker)
    const project = `p${instance.slice(-6)}`
    const files = (apiEnv: string): Record<string, string> => ({
      [project]: [
        '[[service]]\nname = "web"\nimage = "berth-test/httpd:1"\nport = 8080\nhealth = "/"\n',
        sleeper('api', `depends_on = ["web"]\n[service.env]\nMODE = "${apiEnv}"`),
        sleeper('worker', 'replicas = 2')
      ].join('\n')
    })
    writeServices(cwd, files('one'))
    const first = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.equal(first.status, 200, first.text)
    t.same(first.body, { deployed: ['web', 'api', 'worker'], errors: [], changed: ['web', 'worker', 'api'], removed: [] })

    const before = await instanceContainers(docker, instance)
    t.same([...before.keys()].sort(), [`${project}-api-1`, `${project}-web-1`, `${project}-worker-1`, `${project}-worker-2`])
    const web = before.get(`${project}-web-1`)
    t.match(web?.Labels, { 'berth.instance': instance, 'berth.project': project, 'berth.service': 'web', 'berth.replica': '1', 'berth.hash': /^[0-9a-f]{64}$/ })
    const published = web?.Ports.find(p => p.PrivatePort === 8080)
    t.equal(published?.IP, '127.0.0.1', 'the primary port is published on loopback only')
    t.equal(await (await fetch(`http://127.0.0.1:${published?.PublicPort}/`)).text(), HTTPD_INDEX, 'the service answers there')

    const status = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
    t.same(status.body.services.map(s => [s.name, s.project, s.status, s.replicas, s.running_replicas]).sort(),
      [['api', project, 'running', 1, 1], ['web', project, 'running', 1, 1], ['worker', project, 'running', 2, 2]])
    t.match(status.body.services.find(s => s.name === 'web'), { image: 'berth-test/httpd:1', restarts: 0, containers: [{ name: `${project}-web-1`, state: 'running', address: `127.0.0.1:${published?.PublicPort}` }] })

    const info = await api(kernel, 'GET', '/api/v1/cluster/info', { token })
    t.match(info.body, { cluster: { instance }, nodes: [{ role: 'leader', status: 'ready', services: 3, address: kernel.url('control').href.replace(/\/$/, ''), runtime: { kind: 'docker', version: /^\d+\./, cpus: Number } }] }, 'cluster info describes this node and its engine')

    const noop = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(noop.body, { deployed: ['web', 'api', 'worker'], errors: [], changed: [], removed: [] }, 'an unchanged deploy changes nothing')

    writeServices(cwd, files('two'))
    const second = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(second.body.changed, ['api'], 'only the changed service is reported changed')
    const after = await instanceContainers(docker, instance)
    for (const [name, container] of before) {
      if (name.includes('-api-')) t.not(after.get(name)?.Id, container.Id, `${name} was recreated`)
      else t.equal(after.get(name)?.Id, container.Id, `${name} was left alone`)
    }
    t.not(after.get(`${project}-api-1`)?.Labels['berth.hash'], before.get(`${project}-api-1`)?.Labels['berth.hash'], 'with a new hash')

    writeServices(cwd, { [project]: files('two')[project].replace(sleeper('worker', 'replicas = 2'), '') })
    const third = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(third.body, { deployed: ['web', 'api'], errors: [], changed: [], removed: ['worker'] }, 'a service gone from the files is removed')
    t.same([...(await instanceContainers(docker, instance)).keys()].sort(), [`${project}-api-1`, `${project}-web-1`])
    const remaining = await api<{ services: ServiceStatus[] }>(kernel, 'GET', `/api/v1/status?project=${project}`, { token })
    t.same(remaining.body.services.map(s => s.name).sort(), ['api', 'web'])
    t.same((await api<{ services: unknown[] }>(kernel, 'GET', '/api/v1/status?project=other', { token })).body.services, [], 'the project filter applies')

    const history = await api<{ deploys: Array<{ trigger: string, by: string, deployed: string[], services: Array<{ name: string, hash: string }> }> }>(kernel, 'GET', '/api/v1/deploys', { token })
    t.same(history.body.deploys.map(d => [d.trigger, d.by, d.deployed.length]), [['deploy', 'admin', 3], ['deploy', 'admin', 3], ['deploy', 'admin', 2]], 'every deploy that changed something is in the history, with who asked')
    t.equal(history.body.deploys[1].services.find(s => s.name === 'api')?.hash, after.get(`${project}-api-1`)?.Labels['berth.hash'], 'with the hashes deployed')
  })
}

t.test('scale up and down; restart; stop; delete a service and a project (stand-in engine)', async t => {
  const engine = busyboxEngine()
  const { kernel, cwd, project, token } = await reconcilerKernel(t, engine)
  writeServices(cwd, { [project]: sleeper('worker') + sleeper('other') })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  const original = engine.containers().get(`${project}-worker-1`)?.id

  const up = await api<DeployResult & { replicas: number }>(kernel, 'POST', '/api/v1/services/worker/scale', { token, body: { replicas: 3 } })
  t.same(up.body, { deployed: ['worker'], errors: [], changed: ['worker'], removed: [], replicas: 3 })
  t.same([...engine.containers().keys()].filter(n => n.includes('worker')).sort(), [1, 2, 3].map(i => `${project}-worker-${i}`))

  const down = await api<DeployResult>(kernel, 'POST', '/api/v1/services/worker/scale', { token, body: { replicas: 1 } })
  t.same(down.body.errors, [])
  const left = [...engine.containers().values()].filter(c => c.labels['berth.service'] === 'worker')
  t.same(left.map(c => c.id), [original], 'scaling down keeps the first replica')
  const bad = await api(kernel, 'POST', '/api/v1/services/worker/scale', { token, body: { replicas: -2 } })
  t.same([bad.status, bad.body], [400, { error: 'replicas must be an integer ≥ 0, got -2', code: 'BERTH_BAD_REQUEST' }])
  t.equal((await api(kernel, 'POST', '/api/v1/services/ghost/scale', { token, body: { replicas: 1 } })).status, 404)

  const restarted = await api<{ restarted: string[] }>(kernel, 'POST', '/api/v1/services/worker/restart', { token })
  t.same(restarted.body, { restarted: [`${project}-worker-1`] })
  t.equal(engine.containers().get(`${project}-worker-1`)?.id, original, 'a restart keeps the container')

  const stopped = await api(kernel, 'POST', '/api/v1/stop', { token })
  t.same(stopped.body, { stopped: ['other', 'worker'], containers: 2 })
  const status = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
  t.same(status.body.services.map(s => [s.name, s.status, s.running_replicas]).sort(), [['other', 'stopped', 0], ['worker', 'stopped', 0]])
  const resumed = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
  t.same(resumed.body.changed.sort(), ['other', 'worker'], 'the next deploy starts them again')
  t.equal(engine.containers().get(`${project}-worker-1`)?.state, 'running')

  const removed = await api(kernel, 'DELETE', '/api/v1/services/worker', { token })
  t.same(removed.body, { removed: ['worker'], containers: 1 })
  t.same((await api(kernel, 'DELETE', '/api/v1/services/worker', { token })).body, { error: 'no service named "worker" is deployed', code: 'BERTH_NO_SUCH_SERVICE' })
  const gone = await api(kernel, 'DELETE', `/api/v1/projects/${project}`, { token })
  t.same(gone.body, { removed: ['other'], containers: 1 })
  t.same(engine.containers().size, 0, 'no container left')
  t.equal((await api(kernel, 'DELETE', `/api/v1/projects/${project}`, { token })).status, 404)
})

t.test('a deploy of the files keeps the services a request deployed, unless it prunes (stand-in engine)', async t => {
  const engine = busyboxEngine()
  const { kernel, cwd, project, token } = await reconcilerKernel(t, engine)
  writeServices(cwd, { [project]: sleeper('filed') })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  const requested = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', {
    token, body: { services: [{ name: 'asked', project, image: 'berth-test/busybox:2', command: ['/bin/busybox', 'sleep', '3600'] }] }
  })
  t.same(requested.body, { deployed: ['asked'], errors: [], changed: ['asked'], removed: [] })
  const status = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
  t.same(status.body.services.map(s => [s.name, s.origin]).sort(), [['asked', 'request'], ['filed', 'file']], 'the status says where each came from')
  const asked = engine.containers().get(`${project}-asked-1`)?.id

  const plain = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
  t.same(plain.body, { deployed: ['filed'], errors: [], changed: [], removed: [], kept: ['asked'] }, 'a plain deploy keeps it and says so')
  t.equal(engine.containers().get(`${project}-asked-1`)?.id, asked, 'its container was not touched')

  writeServices(cwd, { [project]: sleeper('other') })
  const edited = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
  t.same(edited.body, { deployed: ['other'], errors: [], changed: ['other'], removed: ['filed'], kept: ['asked'] }, 'a service gone from the files is still removed')

  for (const query of ['?prune=true&service=other', '?prune=yes']) {
    const refused = await api(kernel, 'POST', `/api/v1/deploy${query}`, { token })
    t.equal(refused.status, 400, query)
  }
  const withBody = await api(kernel, 'POST', '/api/v1/deploy?prune=true', { token, body: { services: [{ name: 'x', project, image: 'berth-test/busybox:2' }] } })
  t.same([withBody.status, withBody.body], [400, { error: 'prune goes with a deploy of every service file (no body, no ?service=, no canary)', code: 'BERTH_BAD_REQUEST' }])

  const pruned = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy?prune=true', { token })
  t.same(pruned.body, { deployed: ['other'], errors: [], changed: [], removed: ['asked'] }, 'pruning removes it')
  t.same([...engine.containers().keys()], [`${project}-other-1`])
  t.same((await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services.map(s => s.name), ['other'])
})
