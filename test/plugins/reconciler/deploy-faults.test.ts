// Deploys that meet a fault, with the status true afterwards. A full disk (the state directory on a
// small tmpfs, as root): the deploy is refused with 507 before any container changes; once space
// returns, the next one goes through. A server killed mid-rollout (SIGKILL of `berth server`): after
// it starts again, the status says which deploy did not finish instead of claiming the old spec
// runs, until the next deploy.
import t from 'tap'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type Docker from 'dockerode'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { exited } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { fill, smallDisk } from '../../support/disk.js'
import { dockerEngine, httpdImage } from '../../support/docker.js'
import { api, instanceContainers, reconcilerKernel, removeInstanceAtEnd, serverDir, startServer, testInstance, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

/** A service file of `image` with `replicas` whose environment says `version`. */
const web = (image: string, version: string, replicas = 1): string =>
  `[[service]]\nname = "web"\nimage = "${image}"\nport = 8080\nhealth = "/"\nreplicas = ${replicas}\nenv = { VERSION = "${version}" }\n`

/** The ids of the instance's containers, sorted. */
async function ids (engine: Docker, instance: string): Promise<string[]> {
  return [...(await instanceContainers(engine, instance)).values()].map(c => c.Id).sort()
}

if (docker !== undefined) {
  t.test('a full disk refuses a deploy before it changes anything, and the next one goes through once space returns', async t => {
    const mounted = smallDisk(t)
    if (mounted instanceof Error) {
      if (process.env.CI !== undefined) t.fail(`a tmpfs is needed to fill a disk: ${mounted.message}`)
      else t.comment(`skipped: a tmpfs is needed to fill a disk (${mounted.message})`)
      return
    }
    const stateDir = join(mounted, 'state')
    mkdirSync(stateDir)
    const image = await httpdImage(docker)
    const { kernel, cwd, project, token, instance } = await reconcilerKernel(t, docker, { stateDir })
    const status = async (): Promise<ServiceStatus | undefined> => (await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services[0]
    writeServices(cwd, { [project]: web(image, '1') })
    t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
    const before = await ids(docker, instance)

    const filler = fill(mounted)
    writeServices(cwd, { [project]: web(image, '2') })
    const refused = await api<{ error: string, code: string }>(kernel, 'POST', '/api/v1/deploy', { token })
    t.match(refused, { status: 507, body: { code: 'BERTH_STORAGE_FAULT', error: /^the server cannot write its state now: no space left on the device \(\d+ bytes free where the state is kept, 1048576 needed\)/ } })
    t.same(await ids(docker, instance), before, 'no container changed')
    t.match(await status(), { status: 'running', running_replicas: 1 }, 'the status is as it was')
    t.equal((await status())?.reason, undefined)

    rmSync(filler)
    t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [], 'space back: the deploy goes through')
    t.not((await ids(docker, instance))[0], before[0], 'the replica was replaced')
  })

  t.test('a server killed mid-rollout: started again, its status names the deploy that did not finish', async t => {
    const image = await httpdImage(docker)
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const server = await serverDir(t, ['tokens', 'secrets', 'reconciler'], `[reconciler]\ninstance = "${instance}"\nnetwork = "berth-test"\nstop_timeout_secs = 0\n`)
    const project = `p${instance.slice(-6)}`
    let child = await startServer(t, server)
    const token = readFileSync(join(server.stateDir, 'admin.token'), 'utf8').trim()
    const call = async <T>(method: string): Promise<{ status: number, body: T }> => {
      const response = await fetch(`${server.url}/api/v1/${method === 'GET' ? 'status' : 'deploy'}`, { method, headers: { authorization: `Bearer ${token}` } })
      return { status: response.status, body: await response.json() as T }
    }
    const status = async (): Promise<ServiceStatus | undefined> => (await call<{ services: ServiceStatus[] }>('GET')).body.services[0]
    writeServices(server.dir, { [project]: web(image, '1', 3) })
    t.same((await call<DeployResult>('POST')).body.errors, [])
    const three = await ids(docker, instance)

    writeServices(server.dir, { [project]: web(image, '2', 3) })
    const deploying = call('POST').catch(() => undefined)
    await pollUntil(async () => (await ids(docker, instance)).some(id => !three.includes(id)), { what: 'the rollout to replace a replica' })
    child.kill('SIGKILL')
    await deploying
    await exited(child)
    child = await startServer(t, server)
    t.match(await status(), { status: 'degraded', reason: new RegExp(`^a deploy of ${image} \\(spec [0-9a-f]{12}\\) began at \\S+ and its outcome could not be stored: containers may run that spec or the one shown; deploy again$`) }, 'the status does not claim the old spec runs')
    t.same((await call<DeployResult>('POST')).body.errors, [], 'the next deploy')
    t.match(await status(), { status: 'running', running_replicas: 3 })
    t.equal((await status())?.reason, undefined, 'ends it')
  })
}
