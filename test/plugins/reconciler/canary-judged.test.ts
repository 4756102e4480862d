// Canaries judged by their health (auto-promotion), on the stand-in engine (test/support/fake-engine.ts;
// the judgement is the reconciler's, the healthcheck's verdict is set by the test): a canary that stays
// healthy through its window is promoted by itself, one whose engine healthcheck turns unhealthy is
// rolled back by itself, each decision with its reason in the deploy history; refusals of a bad window.
import t from 'tap'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { HistoryEntry } from '../../../plugins/reconciler/state.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { runCli } from '../../support/cli.js'
import { HTTPD_IMAGE } from '../../support/docker.js'
import { FAKE_HTTPD, FakeEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

/** The web service of `version`, with an engine healthcheck (healthy unless the test says otherwise). */
function web (project: string, version: string): Record<string, unknown> {
  return {
    name: 'web', project, image: HTTPD_IMAGE, port: 8080, health: '/', replicas: 2, env: { VERSION: version },
    healthcheck: { command: '/bin/busybox test ! -f /www/sick', interval_secs: 1, retries: 1 }
  }
}

t.test('a canary judged by its health: promoted when healthy, rolled back when not, the decision in the history (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD } })
  const { kernel, project, token } = await reconcilerKernel(t, engine)
  const call = async <T = { error?: string }>(method: string, path: string, body?: unknown): Promise<{ status: number, body: T }> => await api<T>(kernel, method, path, { token, body })
  const status = async (): Promise<ServiceStatus | undefined> => (await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')).body.services[0]
  const history = async (): Promise<HistoryEntry[]> => (await call<{ deploys: HistoryEntry[] }>('GET', '/api/v1/deploys')).body.deploys
  t.same((await call<DeployResult>('POST', '/api/v1/deploy', { services: [web(project, 'v1')] })).body.errors, [])

  for (const [secs, error] of [[0, /auto_promote_secs must be an integer from 1 to 604800/], [1.5, /auto_promote_secs must be an integer/], ['60', /auto_promote_secs must be an integer/]] as const) {
    t.match(await call('POST', '/api/v1/deploy', { services: [web(project, 'v2')], canary: { auto_promote_secs: secs } }), { status: 400, body: { error: error } }, `auto_promote_secs ${JSON.stringify(secs)} is refused`)
  }

  // Healthy through its window: promoted, every replica runs its spec.
  const started = await call<DeployResult & { canary: { judge_at?: string } }>('POST', '/api/v1/deploy', { services: [web(project, 'v2')], canary: { weight: 20, auto_promote_secs: 3 } })
  t.match(started, { status: 200, body: { errors: [], canary: { weight: 20, judge_at: /^\d{4}-/ } } })
  const promoted = await pollUntil(async () => { const last = (await history()).at(-1); return last?.trigger === 'promote' && last }, { what: 'the healthy canary to be promoted', timeout: 30_000 })
  t.equal(promoted.reason, 'auto-promotion: healthy after 3 s', 'the decision and why, in the history')
  t.equal(promoted.by, undefined, 'no token asked for it')
  t.match(await status(), { status: 'running', running_replicas: 2 })
  t.equal((await status())?.canary, undefined, 'the canary ended')

  // Unhealthy by its window's end (its healthcheck fails once it runs): rolled back.
  t.same((await call<DeployResult>('POST', '/api/v1/deploy', { services: [web(project, 'v3')], canary: { auto_promote_secs: 6 } })).body.errors, [])
  engine.setHealth(`${project}-web-canary`, 'unhealthy')
  const rolledBack = await pollUntil(async () => { const last = (await history()).at(-1); return last?.trigger === 'rollback' && last }, { what: 'the unhealthy canary to be rolled back', timeout: 30_000 })
  t.equal(rolledBack.reason, 'auto-promotion: the engine\'s healthcheck says unhealthy after 6 s')
  t.match(await status(), { status: 'running', running_replicas: 2 }, 'the replicas run v2 as before')
  t.equal((await status())?.canary, undefined)
  const table = await runCli(['deploys'], { env: { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token } })
  t.match(table.stdout, /\n\S+ +rollback +auto +web +ok\n$/, 'berth deploys says "auto" for them')
})
