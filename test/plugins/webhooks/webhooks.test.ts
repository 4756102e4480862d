// Webhooks against real git and a real Docker engine: a bare repository on disk, a clone as the
// server's working directory, a commit that changes one service file pushed by another clone, and
// the signed push that deploys exactly that service; a named service redeployed from GitHub- and
// GitLab-style pushes; signatures and matching refused in every way; a burst coalesced; the
// registrations kept across a restart; the commands.
import t from 'tap'
import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Store } from '../../../kernel/store.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import webhooks from '../../../plugins/webhooks/index.js'
import { Registrations } from '../../../plugins/webhooks/registrations.js'
import type { Invocation } from '../../../plugins/webhooks/runner.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { dockerEngine } from '../../support/docker.js'
import { adminToken, api, busyboxInRegistry, instanceContainers, reconcilerSection, removeInstanceAtEnd, startKernel, testInstance, tokenFor } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const run = promisify(execFile)
const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (await run('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd })).stdout.trim()

const SECRET = 'push-secret-9c1d7e44'
const REPO = 'ops/infrastructure'

const docker = await requireComponent(t, 'docker', dockerEngine)

t.test('a damaged registration store fails the start loudly, never an empty list', async t => {
  const store = Store.open(tempDir(t))
  t.teardown(async () => { await store.close() })
  const db = store.forPlugin('webhooks').db<unknown, string>('registrations')
  await db.put('bad', 'not a registration')
  t.throws(() => new Registrations(db as never), { message: /webhook registration bad cannot be read: the store is damaged/ })
})

if (docker !== undefined) {
  t.test('pushes redeploy what they name: __infra__ deploys the changed service only, a named service is force-pulled', async t => {
    const image = await busyboxInRegistry(t, docker)
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const project = `p${instance.slice(-6)}`
    const service = (name: string, message: string): string =>
      `[[service]]\nname = "${name}"\nimage = "${image}"\ncommand = ["/bin/busybox", "sh", "-c", "echo ${message}; exec /bin/busybox sleep 3600"]\n`

    // The infrastructure repository: bare on disk, an author's clone, and the server's clone.
    const root = tempDir(t)
    const bare = join(root, 'origin.git')
    await git(root, 'init', '--bare', bare)
    const author = join(root, 'author')
    await git(root, 'clone', bare, author)
    await git(author, 'checkout', '-b', 'main')
    const write = (name: string, message: string): void => {
      mkdirSync(join(author, 'services', name), { recursive: true })
      writeFileSync(join(author, 'services', name, 'service.toml'), service(`${project}-${name}`, message))
    }
    write('alpha', 'one')
    write('beta', 'one')
    await git(author, 'add', '.')
    await git(author, 'commit', '-m', 'two services')
    await git(author, 'push', 'origin', 'main')
    const cwd = join(root, 'server')
    await git(root, 'clone', '--branch', 'main', bare, cwd)

    const stateDir = tempDir(t)
    const plugins = [tokens, secrets, reconciler, webhooks]
    const config = { reconciler: reconcilerSection(instance) }
    const kernel = await startKernel(t, { plugins, cwd, stateDir, config })
    const token = adminToken(kernel)
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    const ids = async (): Promise<Record<string, string>> => Object.fromEntries([...await instanceContainers(docker, instance)].map(([name, c]) => [name.replace(/-\d+$/, '').replace(/^(alpha|beta)-/, ''), c.Id]))
    const before = await ids()
    t.same(Object.keys(before).sort(), [`${project}-alpha`, `${project}-beta`])

    // Registration: checked, role-guarded, never listing the secret.
    const viewer = await tokenFor(kernel, 'viewer')
    const registration = { repo: REPO, service_name: '__infra__', branch: 'main', secret: SECRET }
    t.equal((await api(kernel, 'POST', '/api/v1/webhooks', { token: viewer, body: registration })).status, 403, 'a viewer cannot register')
    t.equal((await api(kernel, 'POST', '/api/v1/webhooks', { body: registration })).status, 401, 'nor can an anonymous caller')
    const bad = await api<{ error: string }>(kernel, 'POST', '/api/v1/webhooks', { token, body: { repo: 'no-slash', service_name: 'Bad Name', branch: 'main', secret: 'short', extra: 1 } })
    t.same([bad.status, bad.body.error], [400, 'repo must be <owner>/<repo>; service_name must be a service name or __infra__; secret must be a string of at least 16 characters; unknown field extra'])
    const infra = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token, body: registration })
    t.equal(infra.status, 201)
    const named = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token, body: { ...registration, service_name: `${project}-alpha` } })
    const listed = await api<{ webhooks: object[] }>(kernel, 'GET', '/api/v1/webhooks', { token: viewer })
    t.equal(listed.body.webhooks.length, 2)
    t.notMatch(listed.text, SECRET, 'the secret is never listed')

    // The author changes beta only, and pushes.
    write('beta', 'two')
    await git(author, 'commit', '-am', 'beta says two')
    await git(author, 'push', 'origin', 'main')
    const sha = await git(author, 'rev-parse', 'HEAD')

    const receive = async (provider: string, body: object, headers: Record<string, string>): Promise<{ status: number, text: string }> => {
      const response = await fetch(new URL(`/api/v1/webhooks/${provider}`, kernel.url('control')), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
      return { status: response.status, text: await response.text() }
    }
    const signed = (body: object, secret = SECRET): Record<string, string> => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(JSON.stringify(body)).digest('hex')}` })
    const push = { repo: REPO, ref: 'refs/heads/main', sha }

    t.match(await receive('git', push, {}), { status: 401, text: /missing or bad signature.*"code":"BERTH_BAD_SIGNATURE"/ }, 'unsigned: 401')
    t.match(await receive('git', push, signed(push, 'another-secret-0000')), { status: 401 }, 'signed with another secret: 401')
    t.match(await receive('git', push, { 'x-hub-signature-256': signed(push)['x-hub-signature-256'].replace(/.$/, last => last === '0' ? '1' : '0') }), { status: 401 }, 'a changed signature: 401')
    const elsewhere = { ...push, repo: 'ops/other' }
    t.match(await receive('git', elsewhere, signed(elsewhere)), { status: 404, text: /no webhook is registered for ops\/other.*"code":"BERTH_NO_SUCH_WEBHOOK"/ })
    const branch = { ...push, ref: 'refs/heads/feature' }
    t.match(await receive('git', branch, signed(branch)), { status: 404, text: /registered for branch feature/ })
    t.match(await receive('svn', push, signed(push)), { status: 404, text: /use one of git, github, gitea, gitlab/ })
    t.match(await receive('git', { repo: REPO }, signed({ repo: REPO })), { status: 400, text: /has no ref, sha/ })

    const accepted = await receive('git', push, signed(push))
    t.equal(accepted.status, 202, accepted.text)
    const history = async (id: string): Promise<Invocation[]> => (await api<{ invocations: Invocation[] }>(kernel, 'GET', `/api/v1/webhooks/${id}/history`, { token: viewer })).body.invocations
    // The named webhook matched too (same repo and branch): both run, each once.
    const [infraRun] = await pollUntil(async () => { const h = await history(infra.body.id); return h.length > 0 && h }, { timeout: 60_000, what: 'the __infra__ run' })
    t.match(infraRun, { sha, outcome: 'ok', detail: `deployed ${project}-beta` }, 'the pull brought the change; exactly the changed service was deployed')
    const [namedRun] = await pollUntil(async () => { const h = await history(named.body.id); return h.length > 0 && h }, { timeout: 60_000, what: 'the named run' })
    t.match(namedRun, { sha, outcome: 'ok', detail: `deployed ${project}-alpha` }, 'the named service was force-pulled and recreated')
    const after = await ids()
    t.not(after[`${project}-beta`], before[`${project}-beta`], 'beta recreated')

    // GitHub- and GitLab-shaped pushes for the named service; a burst of three coalesces.
    await api(kernel, 'DELETE', `/api/v1/webhooks/${infra.body.id}`, { token })
    const github = (commit: string): object => ({ ref: 'refs/heads/main', after: commit, repository: { full_name: REPO } })
    const burst = ['a1', 'b2', 'c3'].map(c => c.repeat(20))
    for (const commit of burst) t.equal((await receive('github', github(commit), signed(github(commit)))).status, 202)
    // An invocation is listed once it has ended; earlier pushes of this hook are in the history too.
    const runs = await pollUntil(async () => { const h = (await history(named.body.id)).filter(i => burst.includes(i.sha)); return h.length === 3 && h }, { timeout: 60_000, what: 'the burst to settle' })
    t.same(runs.map(i => [i.sha, i.outcome]).sort(), [[burst[0], 'ok'], [burst[1], 'superseded'], [burst[2], 'ok']].sort(), 'the middle push was superseded by the newest')
    const gitlab = { ref: 'refs/heads/main', checkout_sha: 'd4'.repeat(20), project: { path_with_namespace: REPO } }
    t.equal((await receive('gitlab', gitlab, { 'x-gitlab-token': 'wrong-token-000000' })).status, 401)
    t.equal((await receive('gitlab', gitlab, { 'x-gitlab-token': SECRET })).status, 202)
    await pollUntil(async () => (await history(named.body.id))[0]?.sha === gitlab.checkout_sha, { timeout: 60_000, what: 'the GitLab run' })

    // The commands, then a restart: registrations are kept, the history is not.
    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
    const listedCli = await runCli(['webhooks', 'list'], { env })
    t.equal(listedCli.code, 0, listedCli.stderr)
    t.match(listedCli.stdout, new RegExp(`${named.body.id}\\s+${REPO}\\s+main\\s+${project}-alpha`))
    const historyCli = await runCli(['webhooks', 'history', named.body.id], { env })
    t.match(historyCli.stdout, /superseded/)
    const added = await runCli(['webhooks', 'add', '--repo', REPO, '--service', '__infra__', '--branch', 'release'], { env: { ...env, WEBHOOK_SECRET: SECRET } })
    t.match(added.stdout, /^webhook [0-9a-f]{12} added: pushes to ops\/infrastructure release → __infra__\n/)
    const noSecret = await runCli(['webhooks', 'add', '--repo', REPO, '--service', '__infra__'], { env: { ...env, WEBHOOK_SECRET: '' } })
    t.same([noSecret.code, noSecret.stderr], [2, 'berth: no secret: pass --secret or set WEBHOOK_SECRET\n'])
    await kernel.stop()
    const again = await startKernel(t, { plugins, cwd, stateDir, config })
    const kept = await api<{ webhooks: Array<{ id: string }> }>(again, 'GET', '/api/v1/webhooks', { token })
    t.equal(kept.body.webhooks.length, 2, 'both registrations survive the restart')
    t.same((await api<{ invocations: unknown[] }>(again, 'GET', `/api/v1/webhooks/${named.body.id}/history`, { token })).body.invocations, [], 'the history is in memory only')
  })
}
