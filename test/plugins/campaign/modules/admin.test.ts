// Admin, and the feedback every module records: feedback stored (and still in LMDB after a stop), the
// users who signed in, and the health report's counts and feedback per module.
import t from 'tap'
import { join } from 'node:path'
import { open } from 'lmdb'
import { campaignApp, onSharedBackends } from '../../../support/campaign.js'
import { arrayFrom } from '../../../../plugins/campaign/store/contract.js'
import type { FeedbackRecord } from '../../../../plugins/campaign/modules/shared/feedback.js'

t.test('through the API', async t => {
  const { kernel, login, call } = await campaignApp(t, { contribution_limit_cents: 10_000 })
  const admin = await login('admin')
  // What the counts count: four documents, three volunteers, two donors.
  for (const title of ['Housing plan', 'Transit plan', 'Parks plan', 'Wage plan']) await call('kb-ingest', { title, text: `The ${title.toLowerCase()} in one sentence.` })
  const base = { availability: ['sat-am'], location: { lat: 52.5, lon: 13.4 }, skills: ['canvassing'] }
  for (const name of ['Nia', 'Finn', 'Pia']) await call('save-volunteer', { ...base, name, email: `${name.toLowerCase()}@x.test` })
  for (const [name, email] of [['Dora Donor', 'dora@x.test'], ['Eve Ewing', 'eve@x.test']]) await call('record-donation', { donor_name: name, donor_email: email, amount_cents: 2000 })

  await t.test('feedback is stored; admin sees the users who signed in and the counts', async t => {
    t.match(await call('record-feedback', { module_id: 'knowledge-base', resource_id: 'doc-1', is_positive: false, is_active: true }), { recorded: true })
    const { users: signedIn } = await call<{ users: Array<Record<string, unknown>> }>('admin-list-users', {}, admin)
    t.same(signedIn.map(u => [u.email, u.role, u.logins]), [['admin@campaign.test', 'admin', 1], ['staff@campaign.test', 'staff', 1]])
    t.notOk(signedIn.some(u => 'access_token' in u || 'refresh_token' in u), 'no tokens are kept with users')
    await call('record-feedback', { module_id: 'knowledge-base', resource_id: 'doc-2', is_positive: true, is_active: true }, admin)
    await call('record-feedback', { module_id: 'fundraising', resource_id: 'letter-1', is_positive: true, is_active: true }, admin)
    await call('record-feedback', { module_id: 'fundraising', resource_id: 'letter-1', is_positive: true, is_active: false }, admin)
    const health = await call<{ status: string, identity_provider: string, counts: Record<string, number>, feedback: unknown[] }>('admin-health', {}, admin)
    t.match(health, { status: 'ok', identity_provider: /\/realms\/campaign$/, counts: { sessions: 2, users: 2, documents: 4, volunteers: 3, donors: 2 } })
    t.match(health, { feedback: [{ module_id: 'knowledge-base', positive: 1, negative: 1, resources: 2 }] }, 'feedback per module; a withdrawn rating is not counted')
    t.equal(health.feedback.length, 1)
  })

  if (onSharedBackends()) {
    const stored = await arrayFrom(kernel.service('campaign').store.table<FeedbackRecord, string[]>('feedback').range())
    t.match(stored.find(f => f.key[1] === 'doc-1'), { key: ['knowledge-base', 'doc-1', 'dev-staff'], value: { is_positive: false, is_active: true } }, 'feedback is in PostgreSQL')
    return
  }
  await kernel.stop()
  const env = open({ path: join(kernel.config.stateDir, 'berth.mdb'), readOnly: true })
  t.teardown(async () => { await env.close() })
  const feedback = [...env.openDB({ name: 'campaign/feedback' }).getRange()]
  t.match(feedback.find(f => (f.key as string[])[1] === 'doc-1'), { key: ['knowledge-base', 'doc-1', 'dev-staff'], value: { is_positive: false, is_active: true } }, 'feedback survives in LMDB')
})
