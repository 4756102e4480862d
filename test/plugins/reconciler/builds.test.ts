// Builds through the real engine: a service declared with `[service.build]` (a Dockerfile FROM the
// busybox image the tests import, a build argument) is built, tagged by the content hash of its
// sources (less what its .dockerignore excludes) and run; the same sources deploy as unchanged; a change builds and rolls out a new tag; a
// rollback runs the previous build with no registry; a redeploy pulls nothing; builds beyond
// builds_kept go once no container uses them; a broken build fails its service, which keeps serving;
// a canary runs (and a promote keeps) the build of the sources as they are then. With a build registry
// (a real one, with a login), builds are pushed there and a rollback pulls one back. A service built from a git repository (a real one, fetched over file://) builds its branch's newest
// commit, and a signed push to its webhook builds and rolls out the pushed commit, an older one too.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import webhooks from '../../../plugins/webhooks/index.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine, startRegistry } from '../../support/docker.js'
import { api, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Status { name: string, image: string, containers: Array<{ address?: string }> }

/** The text the service's first replica serves at `/`, once it serves. */
async function served (status: () => Promise<Status>, text?: string): Promise<string> {
  return await pollUntil(async () => {
    const address = (await status()).containers[0]?.address
    if (address === undefined) return false
    const body: string | false = await fetch(`http://${address}/`).then(async r => r.ok ? await r.text() : false, () => false)
    return body !== false && (text === undefined || body === text) ? body : false
  }, { what: `the site to serve ${text ?? ''}` })
}

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
    const version = async (text: string): Promise<DeployResult> => { writeFileSync(join(app, 'index.html'), text); return await deploy() }

    t.match(await version('first\n'), { deployed: ['site'], errors: [], changed: ['site'] })
    const first = (await site()).image
    t.match(first, new RegExp(`^${repository}:[0-9a-f]{16}$`), 'tagged by the content hash of its sources')
    t.equal(await served(site), 'first\n')
    const [container] = await docker.listContainers({ filters: { ancestor: [first] } })
    t.ok((await docker.getContainer(container.Id).inspect()).Config.Env.includes('GREETING=hello'), 'with its build argument')
    t.match(await deploy(), { errors: [], changed: [] }, 'the same sources: nothing built, nothing recreated')
    writeFileSync(join(app, 'notes.md'), 'to do\n')
    writeFileSync(join(app, 'debug.log'), 'noise\n')
    t.match(await deploy(), { errors: [], changed: [] }, 'files the .dockerignore excludes are not sources')

    t.match(await version('second\n'), { errors: [], changed: ['site'] }, 'changed sources: built and rolled out')
    const second = (await site()).image
    t.not(second, first)
    t.equal(await served(site), 'second\n')
    t.match(await deploy(`/api/v1/services/site/rollback`), { errors: [] })
    t.equal((await site()).image, first, 'a rollback runs the previous build, from no registry')
    t.equal(await served(site), 'first\n')
    t.match(await deploy('/api/v1/services/site/redeploy'), { errors: [], changed: ['site'] }, 'a redeploy pulls nothing')

    await version('third\n')
    await version('fourth\n')
    const kept = (await docker.listImages({ filters: { reference: [repository] } })).flatMap(i => i.RepoTags ?? [])
    t.equal(kept.length, 2, `builds_kept = 2: the older builds went (${kept.join(', ')})`)
    t.equal(await served(site), 'fourth\n')

    writeFileSync(join(app, 'Dockerfile'), `${dockerfile}COPY missing.txt /missing.txt\n`)
    const broken = await version('fifth\n')
    t.match(broken.errors, [{ service: 'site', error: /missing\.txt/ }], 'a broken build fails its service, saying why')
    t.equal(await served(site), 'fourth\n', 'which keeps serving what ran')

    // A canary runs the build of the sources as they are now (a broken one fails it, saying why).
    const canary = async (): Promise<DeployResult & { canary: { image: string } }> =>
      (await api<DeployResult & { canary: { image: string } }>(kernel, 'POST', '/api/v1/deploy?service=site', { token, body: { canary: { weight: 50 } } })).body
    t.match((await canary()).errors, [{ service: 'site', error: /missing\.txt/ }], 'a canary of a broken build fails')
    writeFileSync(join(app, 'Dockerfile'), dockerfile)
    writeFileSync(join(app, 'index.html'), 'canary\n')
    t.match(await canary(), { errors: [], canary: { image: new RegExp(`^${repository}:[0-9a-f]{16}$`) } }, 'a canary of the sources: built and tagged')
    t.match(await deploy('/api/v1/services/site/promote'), { errors: [] })
    t.equal(await served(site, 'canary\n'), 'canary\n', 'promoted')
  })
}

if (docker !== undefined) {
  t.test('a build registry with a login: built images pushed there (refused without the login), a rollback pulls one back', async t => {
    const base = await busyboxImage(docker)
    const login = { user: 'berth', password: 'registry-pass-3b1c' }
    const registry = await startRegistry(t, login)
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker, { extra: { build_registry: `${registry.host}/builds`, registry_credentials: 'registry.json' } })
    const repository = `${registry.host}/builds/${project}-site`
    t.teardown(async () => {
      for (const image of await docker.listImages({ filters: { reference: [repository] } })) await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)
    })
    const app = join(cwd, 'services', project, 'app')
    mkdirSync(app, { recursive: true })
    writeFileSync(join(app, 'Dockerfile'), `FROM ${base}\nCOPY index.html /www/index.html\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n`)
    writeServices(cwd, { [project]: '[[service]]\nname = "site"\nport = 8080\n[service.build]\ncontext = "app"\n' })
    const site = async (): Promise<Status> => (await api<{ services: Status[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services[0]
    const version = async (text: string, path = '/api/v1/deploy'): Promise<DeployResult> => {
      writeFileSync(join(app, 'index.html'), text)
      return (await api<DeployResult>(kernel, 'POST', path, { token })).body
    }

    const refused = await version('first\n')
    t.match(refused.errors, [{ service: 'site', error: new RegExp(`^pushing ${repository}:[0-9a-f]{16}: .*(unauthorized|authentication required|no basic auth credentials)`) }], 'no login for the registry: the push is refused, saying so')
    writeFileSync(join(cwd, 'registry.json'), JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${login.user}:${login.password}`).toString('base64') } } }))
    t.match(await version('first\n'), { errors: [], changed: ['site'] }, 'with the login: built, pushed, run')
    const first = (await site()).image
    t.match(first, new RegExp(`^${repository}:[0-9a-f]{16}$`), 'tagged in the build registry')
    const tags = await (await fetch(`${registry.url}/v2/builds/${project}-site/tags/list`, { headers: { authorization: `Basic ${Buffer.from(`${login.user}:${login.password}`).toString('base64')}` } })).json() as { tags: string[] }
    t.same(tags.tags, [first.split(':').at(-1)], 'the registry has the build')

    t.match(await version('second\n'), { errors: [], changed: ['site'] })
    await docker.getImage(first).remove({ force: true })
    t.match(await version('second\n', '/api/v1/services/site/rollback'), { errors: [] }, 'a rollback to a build no longer on the node')
    t.equal((await site()).image, first, 'pulls it from the registry')
    t.equal(await served(site), 'first\n')
  })

  t.test('a service built from a git repository: its branch\'s newest commit, then the commit a webhook push names', async t => {
    const base = await busyboxImage(docker)
    // A local repository is fetched only from a folder the operator allowed.
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker, { plugins: [webhooks], extra: { allowed_host_paths: ['repo'] } })
    const git = async (dir: string, ...args: string[]): Promise<string> => (await promisify(execFile)('git', ['-C', dir, ...args])).stdout.trim()
    const repo = join(cwd, 'repo')
    mkdirSync(join(repo, 'site'), { recursive: true })
    await git(repo, 'init', '--quiet', '--initial-branch', 'main')
    await git(repo, 'config', 'user.email', 'dev@example.test')
    await git(repo, 'config', 'user.name', 'dev')
    writeFileSync(join(repo, 'site', 'Dockerfile'), `FROM ${base}\nCOPY index.html /www/index.html\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n`)
    const commit = async (text: string): Promise<string> => {
      writeFileSync(join(repo, 'site', 'index.html'), text)
      await git(repo, 'add', '-A')
      await git(repo, 'commit', '--quiet', '-m', text.trim())
      return await git(repo, 'rev-parse', 'HEAD')
    }
    const first = await commit('one\n')
    writeServices(cwd, { [project]: `[[service]]\nname = "site"\nport = 8080\n[service.build]\ngit = "file://${repo}"\nref = "main"\ncontext = "site"\n` })
    const repository = `berth-build/${project}-site`
    t.teardown(async () => {
      for (const image of await docker.listImages({ filters: { reference: [repository] } })) await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)
    })
    const deployed = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.match(deployed.body, { errors: [], changed: ['site'] }, deployed.text)
    const site = async (): Promise<Status> => (await api<{ services: Status[] }>(kernel, 'GET', '/api/v1/status', { token })).body.services[0]
    t.equal(await served(site), 'one\n', 'the newest commit of main')
    const second = await commit('two\n')
    await commit('three\n')

    const secret = 'a-webhook-secret-for-builds'
    const hook = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token, body: { repo: 'dev/site', service_name: 'site', branch: 'main', secret } })
    t.equal(hook.status, 201, 'registered')
    const push = async (sha: string): Promise<void> => {
      const body = JSON.stringify({ repo: 'dev/site', ref: 'refs/heads/main', sha })
      const answer = await fetch(new URL('/api/v1/webhooks/git', kernel.url('control')), { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` }, body })
      t.equal(answer.status, 202, await answer.text())
    }
    await push(second)
    t.equal(await served(site, 'two\n'), 'two\n', 'the pushed commit, not the newest')
    await push(first)
    t.equal(await served(site, 'one\n'), 'one\n', 'an older commit pushed again (a revert) runs that one')
    const history = await pollUntil(async () => {
      const answer = await api<{ invocations: Array<{ sha: string, outcome: string, detail: string }> }>(kernel, 'GET', `/api/v1/webhooks/${hook.body.id}/history`, { token })
      return answer.body.invocations.length === 2 && answer.body.invocations
    }, { what: 'both pushes in the history' })
    t.same(history.map(i => [i.outcome, i.detail]), [['ok', 'deployed site'], ['ok', 'deployed site']], 'both carried out')
  })
}
