// kill -9 of a `berth server` child, then a restart: the containers are adopted, what went wrong
// while the server was down is repaired by the restarted server without a deploy, and a deploy then
// changes nothing.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { exited } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine, httpdImage } from '../../support/docker.js'
import { instanceContainers, removeInstanceAtEnd, serverDir, startServer, testInstance, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('after kill -9 and a restart, the containers are adopted and only the missing replica is made again', async t => {
    await Promise.all([busyboxImage(docker), httpdImage(docker)])
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const server = await serverDir(t, ['tokens', 'secrets', 'reconciler'], `[reconciler]\ninstance = "${instance}"\nnetwork = "berth-test"\nstop_timeout_secs = 0\n`)
    const project = `p${instance.slice(-6)}`
    writeServices(server.dir, {
      [project]: '[[service]]\nname = "web"\nimage = "berth-test/httpd:1"\nport = 8080\nhealth = "/"\n' +
        '[[service]]\nname = "worker"\nimage = "berth-test/busybox:2"\nreplicas = 2\ncommand = ["/bin/busybox", "sleep", "3600"]\ndepends_on = ["web"]\n'
    })
    const call = async <T>(method: string, path: string): Promise<T> => {
      const token = readFileSync(join(server.stateDir, 'admin.token'), 'utf8').trim()
      const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } })
      return await response.json() as T
    }
    const summary = async (): Promise<string[][]> =>
      (await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')).services.map(s => [s.name, s.status, `${s.running_replicas}/${s.replicas}`]).sort()

    const first = await startServer(t, server)
    t.same((await call<DeployResult>('POST', '/api/v1/deploy')).errors, [])
    const before = await instanceContainers(docker, instance)
    t.equal(before.size, 3)

    first.kill('SIGKILL')
    t.equal(await exited(first), 'SIGKILL', 'the server was killed')
    t.equal((await instanceContainers(docker, instance)).size, 3, 'its containers keep running')
    await docker.getContainer(`${project}-worker-2`).remove({ force: true })

    await startServer(t, server)
    const everything = JSON.stringify([['web', 'running', '1/1'], ['worker', 'running', '2/2']])
    await pollUntil(async () => JSON.stringify(await summary()) === everything, { what: 'the restarted server to repair worker-2 (its default repair loop)' })
    const after = await instanceContainers(docker, instance)
    t.equal(after.get(`${project}-web-1`)?.Id, before.get(`${project}-web-1`)?.Id, 'web was adopted, not recreated')
    t.equal(after.get(`${project}-worker-1`)?.Id, before.get(`${project}-worker-1`)?.Id, 'worker-1 was adopted, not recreated')
    t.not(after.get(`${project}-worker-2`)?.Id, undefined, 'worker-2 exists again')
    t.same(await call<DeployResult>('POST', '/api/v1/deploy'), { deployed: ['web', 'worker'], errors: [], changed: [], removed: [] }, 'and a deploy changes nothing')
  })
}
