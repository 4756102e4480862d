// What git hosts send besides pushes, through the real receivers and their signature checks (no
// container engine needed: nothing here deploys): GitHub's ping when a hook is added (repository and
// organisation hooks), Gitea's and GitLab's test deliveries, other events, a tag, a deleted branch;
// each answered 200 once signed and running nothing, while a real push of the same hook runs.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import webhooks from '../../../plugins/webhooks/index.js'
import type { Invocation } from '../../../plugins/webhooks/runner.js'
import { adminToken, api, reconcilerSection, startKernel, testInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const SECRET = 'hook-secret-5b0e9a17'
const REPO = 'acme/api'
const ZEROS = '0'.repeat(40)
const sha = (c: string): string => c.repeat(40).slice(0, 40)

t.test('pings, test deliveries and other events are answered 200 once signed, and deploy nothing', async t => {
  const cwd = tempDir(t)
  const kernel = await startKernel(t, { plugins: [tokens, secrets, reconciler, webhooks], cwd, config: { reconciler: reconcilerSection(testInstance(), { docker_socket: join(cwd, 'no-engine.sock') }) } })
  const token = adminToken(kernel)
  const registered = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token, body: { repo: REPO, service_name: 'api', branch: 'main', secret: SECRET } })
  t.equal(registered.status, 201)
  const id = registered.body.id

  const receive = async (provider: string, body: object, headers: Record<string, string>): Promise<{ status: number, body: Record<string, unknown> }> => {
    const response = await fetch(new URL(`/api/v1/webhooks/${provider}`, kernel.url('control')), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }
  const hmac = (body: object, secret = SECRET): string => createHmac('sha256', secret).update(JSON.stringify(body)).digest('hex')
  const github = (event: string, body: object, secret = SECRET): Record<string, string> =>
    ({ 'x-github-event': event, 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'x-hub-signature-256': `sha256=${hmac(body, secret)}` })
  const history = async (): Promise<Invocation[]> => (await api<{ invocations: Invocation[] }>(kernel, 'GET', `/api/v1/webhooks/${id}/history`, { token })).body.invocations

  // GitHub: the ping sent when the hook is added, signed like every delivery.
  const ping = { zen: 'Design for failure.', hook_id: 42, hook: { type: 'Repository', events: ['push'], config: { content_type: 'json' } }, repository: { full_name: REPO }, sender: { login: 'octocat' } }
  t.same(await receive('github', ping, github('ping', ping)), { status: 200, body: { event: 'ping', webhooks: [id], detail: 'a ping: the hook works; nothing is deployed' } })
  t.match(await receive('github', ping, github('ping', ping, 'another-secret-0000')), { status: 401, body: { error: /missing or bad signature/ } }, 'a ping signed with another secret: 401, as the hook would fail on pushes')
  t.match(await receive('github', ping, { 'x-github-event': 'ping' }), { status: 401 }, 'an unsigned ping: 401')
  const elsewhere = { ...ping, repository: { full_name: 'acme/other' } }
  t.match(await receive('github', elsewhere, github('ping', elsewhere)), { status: 404, body: { error: 'no webhook is registered for acme/other' } })
  const orgPing = { zen: 'Keep it logically awesome.', hook_id: 43, hook: { type: 'Organization' }, organization: { login: 'acme' } }
  t.same(await receive('github', orgPing, github('ping', orgPing)), { status: 200, body: { event: 'ping', webhooks: [id], detail: 'a ping: the hook works; nothing is deployed' } }, 'an organisation hook\'s ping names no repository: any registration\'s secret')
  const issue = { action: 'opened', issue: { number: 1 }, repository: { full_name: REPO } }
  t.same(await receive('github', issue, github('issues', issue)), { status: 200, body: { event: 'issues', webhooks: [id], detail: 'issues events deploy nothing; pushes to a branch do' } })

  // Gitea's "Test Delivery": a push of the default branch whose before is its after (zeros since 1.22).
  const giteaTest = { ref: 'refs/heads/main', before: ZEROS, after: ZEROS, commits: [{ id: ZEROS, message: 'This is a fake commit for webhook push test' }], total_commits: 1, repository: { full_name: REPO } }
  const giteaHeaders = (body: object): Record<string, string> => ({ 'x-gitea-event': 'push', 'x-github-event': 'push', 'x-gitea-signature': hmac(body), 'x-hub-signature-256': `sha256=${hmac(body)}` })
  const test = 'a test delivery (its before is its after or one of its commits): the hook works; nothing is deployed'
  t.same(await receive('gitea', giteaTest, giteaHeaders(giteaTest)), { status: 200, body: { event: 'push', webhooks: [id], detail: test } })
  const oldGiteaTest = { ...giteaTest, before: sha('ab'), after: sha('ab'), commits: [{ id: sha('ab') }] }
  t.same(await receive('gitea', oldGiteaTest, { 'x-gitea-event': 'push', 'x-gitea-signature': hmac(oldGiteaTest) }), { status: 200, body: { event: 'push', webhooks: [id], detail: test } }, 'older Gitea: the branch head as before and after')
  t.match(await receive('gitea', giteaTest, { 'x-gitea-event': 'push', 'x-gitea-signature': hmac(giteaTest, 'another-secret-0000') }), { status: 401 })

  // GitLab's "Test" → "Push events": the default branch's last three commits, before = the oldest of them.
  const [c1, c2, c3] = [sha('c1'), sha('c2'), sha('c3')]
  const gitlabTest = { object_kind: 'push', before: c1, after: c3, ref: 'refs/heads/main', checkout_sha: c3, commits: [{ id: c3 }, { id: c2 }, { id: c1 }], total_commits_count: 3, project: { path_with_namespace: REPO } }
  t.same(await receive('gitlab', gitlabTest, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': SECRET }), { status: 200, body: { event: 'push', webhooks: [id], detail: test } })
  t.same(await receive('gitlab', gitlabTest, { 'x-gitlab-event': 'Push Event', 'x-gitlab-token': SECRET }), { status: 200, body: { event: 'push', webhooks: [id], detail: test } }, 'the header some versions sent on a test')
  t.match(await receive('gitlab', gitlabTest, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong-token-000000' }), { status: 401, body: { error: 'missing or wrong X-Gitlab-Token' } })
  const mergeRequest = { object_kind: 'merge_request', project: { path_with_namespace: REPO } }
  t.same(await receive('gitlab', mergeRequest, { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-token': SECRET }), { status: 200, body: { event: 'Merge Request Hook', webhooks: [id], detail: 'Merge Request Hook events deploy nothing; pushes to a branch do' } })

  const tag = { ref: 'refs/tags/v1.0.0', before: ZEROS, after: sha('e5'), repository: { full_name: REPO } }
  t.same(await receive('github', tag, github('push', tag)), { status: 200, body: { event: 'push', webhooks: [id], detail: 'ref refs/tags/v1.0.0 is not a branch: nothing is deployed' } }, 'a tag pushed')
  const deleted = { ref: 'refs/heads/main', before: sha('e5'), after: ZEROS, deleted: true, repository: { full_name: REPO } }
  t.same(await receive('github', deleted, github('push', deleted)), { status: 200, body: { event: 'push', webhooks: [id], detail: 'branch main was deleted: nothing is deployed' } }, 'a branch deleted')

  t.same(await history(), [], 'none of them ran anything')

  // A real push of the same hook (before is the previous head, not among its commits) is accepted and runs.
  const real = { ref: 'refs/heads/main', before: c3, after: sha('d4'), commits: [{ id: sha('d4') }], repository: { full_name: REPO } }
  t.same(await receive('gitea', real, giteaHeaders(real)), { status: 202, body: { accepted: [{ id, service_name: 'api' }], sha: sha('d4') } })
  const [run] = await pollUntil(async () => { const h = await history(); return h.length > 0 && h }, { what: 'the push\'s run' })
  t.match(run, { sha: sha('d4'), outcome: 'failed', detail: /no service named "api" is deployed/ }, 'it ran (and failed: nothing named api is deployed here)')

  const removed = await fetch(new URL(`/api/v1/webhooks/${id}`, kernel.url('control')), { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })
  t.same([removed.status, await removed.json()], [200, { deleted: id }], 'DELETE with Content-Type: application/json and no body')
})
