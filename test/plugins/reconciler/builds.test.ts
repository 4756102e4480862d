// Builds through the real engine: a service declared with `[service.build]` (a Dockerfile FROM the
// busybox image the tests import, a build argument) is built, tagged by the content hash of its
// sources (less what its .dockerignore excludes) and run; the same sources deploy as unchanged; a change builds and rolls out a new tag; a
// rollback runs the previous build with no registry; a redeploy pulls nothing; builds beyond
// builds_kept go once no container uses them; a broken build fails its service, which keeps serving.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine } from '../../support/docker.js'
import { api, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Status { name: string, image: string, containers: Array<{ address?: string }> }

if (docker !== undefined) {
  t.test('a service built from its sources: tagged by content, rolled out, rolled back, pruned', async t => {
    const base = await busyboxImage(docker)
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker, { extra: { builds_kept: 2 } })
    const app = join(cwd, 'services', project, 'app')
    mkdirSync(app, { recursive: true })
    const dockerfile = `FROM ${base}\nARG GREETING\nENV GREETING=$GREETING\nCOPY index.html /www/index.html\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n`
    writeFileSync(join(app, 'Dockerfile'), dockerfile)
    writeFileSync(join(app, '.dockerignore'), '# local files\nnotes.md\n*.log\n')
    writeServices(cwd, { [project]: '[[service]]\nname = "site"\nport = 8080\n[service.build]\ncontext = "app"\nargs = { GREETING = "hello" }\n' })
    const repository = `berth-build/${project}-site`
    t.teardown(async () => {
      for (const image of await docker.listImages({ filters: { reference: [repository] } })) await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)
    })
    const deploy = async (path = '/api/v1/deploy'): Promise<DeployResult> => {
      const answer = await api<DeployResult>(kernel, 'POST', path, { token })
      t.equal(answer.status, 200, answer.text)
      return answer.body
    }
    const site = async (): Promise<Status> => (await api<{ services: Status[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services[0]
    const served = async (): Promise<string> => await pollUntil(async () => {
      const address = (await site()).containers[0]?.address
      if (address === undefined) return false
      return await fetch(`http://${address}/`).then(async r => r.ok && await r.text(), () => false)
    }, { what: 'the site to serve' })
    const version = async (text: string): Promise<DeployResult> => { writeFileSync(join(app, 'index.html'), text); return await deploy() }

    t.match(await version('first\n'), { deployed: ['site'], errors: [], changed: ['site'] })
    const first = (await site()).image
    t.match(first, new RegExp(`^${repository}:[0-9a-f]{16}$`), 'tagged by the content hash of its sources')
    t.equal(await served(), 'first\n')
    const [container] = await docker.listContainers({ filters: { ancestor: [first] } })
    t.ok((await docker.getContainer(container.Id).inspect()).Config.Env.includes('GREETING=hello'), 'with its build argument')
    t.match(await deploy(), { errors: [], changed: [] }, 'the same sources: nothing built, nothing recreated')
    writeFileSync(join(app, 'notes.md'), 'to do\n')
    writeFileSync(join(app, 'debug.log'), 'noise\n')
    t.match(await deploy(), { errors: [], changed: [] }, 'files the .dockerignore excludes are not sources')

    t.match(await version('second\n'), { errors: [], changed: ['site'] }, 'changed sources: built and rolled out')
    const second = (await site()).image
    t.not(second, first)
    t.equal(await served(), 'second\n')
    t.match(await deploy(`/api/v1/services/site/rollback`), { errors: [] })
    t.equal((await site()).image, first, 'a rollback runs the previous build, from no registry')
    t.equal(await served(), 'first\n')
    t.match(await deploy('/api/v1/services/site/redeploy'), { errors: [], changed: ['site'] }, 'a redeploy pulls nothing')

    await version('third\n')
    await version('fourth\n')
    const kept = (await docker.listImages({ filters: { reference: [repository] } })).flatMap(i => i.RepoTags ?? [])
    t.equal(kept.length, 2, `builds_kept = 2: the older builds went (${kept.join(', ')})`)
    t.equal(await served(), 'fourth\n')

    writeFileSync(join(app, 'Dockerfile'), `${dockerfile}COPY missing.txt /missing.txt\n`)
    const broken = await version('fifth\n')
    t.match(broken.errors, [{ service: 'site', error: /missing\.txt/ }], 'a broken build fails its service, saying why')
    t.equal(await served(), 'fourth\n', 'which keeps serving what ran')
  })
}
