// The modules: BM25 ranking and passages, the volunteer score, and through a signed-in staff user the
// knowledge base with citations, volunteer matching, fundraising limits, feedback in LMDB, and admin.
import t from 'tap'
import { join } from 'node:path'
import { open } from 'lmdb'
import { ServerFunctionError } from '../../../plugins/campaign/client.js'
import { Bm25Index, tokenize } from '../../../plugins/campaign/text/bm25.js'
import { MAX_PASSAGE_WORDS, splitPassages } from '../../../plugins/campaign/modules/knowledge-base/knowledge-base.js'
import { distanceKm, volunteerScore } from '../../../plugins/campaign/modules/volunteers/volunteer-score.js'
import { campaignApp, statusOf } from '../../support/campaign.js'

t.test('BM25: scores by the documented formula, ranks, drops stop words, replaces re-added entries', async t => {
  const index = new Bm25Index()
  index.add('a', 'Housing policy: housing!')
  index.add('b', 'The transit policy')
  index.add('c', 'Schools')
  t.same(tokenize('The Housing-policy, 2026'), ['housing', 'policy', '2026'])
  // N = 3, n(housing) = 1, |a| = 3, avgdl = 2: idf = ln(1 + 2.5 / 1.5), tf part = 2·2.2 / (2 + 1.2·(0.25 + 0.75·1.5)).
  const expected = Math.log(1 + 2.5 / 1.5) * 4.4 / (2 + 1.2 * (0.25 + 0.75 * 1.5))
  const [best] = index.search('housing', 5)
  t.equal(best.id, 'a')
  t.ok(Math.abs(best.score - expected) < 1e-9, `score ${best.score} = ${expected}`)
  t.same(index.search('policy', 5).map(r => r.id), ['b', 'a'], 'the shorter passage ranks first for an equal count')
  t.same(index.search('the of', 5), [], 'stop words alone match nothing')
  t.same(index.search('budget', 5), [])
  index.add('a', 'Budget')
  t.same(index.search('housing', 5), [], 're-adding replaces the old text')
  t.equal(index.search('budget', 5)[0].id, 'a')
})

t.test('passages are paragraphs, cut at sentence ends beyond the word limit', async t => {
  t.same(await splitPassages('One two.\n\n  Three\nfour.  \n\n\n'), ['One two.', 'Three four.'])
  const sentence = `${'word '.repeat(49)}end. `
  const long = await splitPassages(sentence.repeat(5))
  t.equal(long.length, 3)
  t.ok(long.every(p => p.split(' ').length <= MAX_PASSAGE_WORDS))
})

t.test('sentence ends are real ones: decimals, abbreviations, URLs and e-mail addresses stay whole', async t => {
  const text = 'The plan sets the minimum wage at $17.25 per hour, up 3.4 percent. Dr. Alvarez briefed U.S. officials on Jan. 5 at 3 p.m. The full text is at https://example.org/plan.v2.html and questions go to policy.team@campaign.org. Mr. Lopez agreed.'
  const words = (s: string): number => s.split(' ').length
  const cut = await splitPassages(`${'Filler words here. '.repeat(Math.ceil((MAX_PASSAGE_WORDS - words(text) + 5) / 3))}\n\n${text}`)
  t.equal(cut.at(-1), text, 'a paragraph kept as written, every number, name and address whole')
  const long = Array.from({ length: 10 }, () => text).join(' ')
  const passages = await splitPassages(long)
  t.ok(passages.length > 2, `a long paragraph is cut (${passages.length} passages)`)
  t.equal(passages.join(' '), long, 'nothing lost or changed')
  t.same(passages.filter(p => /\$17\. 25|3\. 4 percent|Dr\.$|U\.$|example\.$/.test(p)), [], 'cut only where a sentence ends')
})

t.test('volunteer score = 0.5·skills + 0.3·availability + 0.2·distance', async t => {
  const here = { lat: 52.5, lon: 13.4 }
  const north = { lat: 52.6, lon: 13.4 }
  t.ok(Math.abs(distanceKm(here, north) - 11.12) < 0.01, '0.1° of latitude ≈ 11.12 km')
  const parts = volunteerScore({ skills: ['Canvassing'], availability: ['sat-am'], location: north },
    { skills: ['canvassing', 'phone'], slots: ['sat-am', 'sun-am'], location: here, max_km: 25 })
  t.same({ skills: parts.skills, availability: parts.availability, distance: parts.distance }, { skills: 0.5, availability: 0.5, distance: 0.555 })
  t.equal(parts.score, 0.511, '0.25 + 0.15 + 0.2·0.5552')
  t.equal(volunteerScore({ skills: [], availability: [], location: here }, { skills: [], slots: [], location: here, max_km: 1 }).score, 1, 'nothing asked: full marks')
  t.equal(volunteerScore({ skills: [], availability: [], location: north }, { skills: ['x'], slots: ['mon-am'], location: here, max_km: 5 }).score, 0, 'too far, nothing matching')
})

t.test('the modules through the API', async t => {
  const { kernel, login, call } = await campaignApp(t, { contribution_limit_cents: 10_000 })
  const admin = await login('admin')

  await t.test('knowledge base: ingest, then ranked passages with citations', async t => {
    const doc = await call<{ document_id: string, passage_count: number }>('kb-ingest', {
      title: 'Housing plan', source: 'platform.pdf',
      text: 'We will build 10,000 affordable homes near transit.\n\nRent control protects tenants from sudden increases.\n\nParks get new funding.'
    })
    t.match(doc, { document_id: /^[0-9a-f]{16}$/, passage_count: 3 })
    await call('kb-ingest', { title: 'Transit plan', text: 'Night buses and transit passes for students.' })
    const answer = await call<{ results: Array<{ cite: number, title: string, passage: number, text: string, score: number }>, citations: string[] }>('kb-query', { query: 'affordable homes transit', limit: 2 })
    t.same(answer.results.map(r => [r.cite, r.title, r.passage]), [[1, 'Housing plan', 0], [2, 'Transit plan', 0]])
    t.ok(answer.results[0].score > answer.results[1].score)
    t.equal(answer.results[0].text, 'We will build 10,000 affordable homes near transit.')
    t.same(answer.citations, ['[1] Housing plan, passage 1', '[2] Transit plan, passage 1'])
    const again = await call<{ document_id: string }>('kb-ingest', { title: 'Housing plan', source: 'platform.pdf', text: 'Only parks now.' })
    t.not(again.document_id, doc.document_id, 'another text is another document')
    await t.rejects(call('kb-ingest', { title: 'Empty', text: ' \n\n ' }), new ServerFunctionError(400, 'text holds no words to index'))
    const wage = 'Our plan raises the minimum wage to $17.25 per hour by 2027, up 3.4 percent a year. Dr. Reyes of the U.S. Department of Labor reviewed the figures. Read more at https://example.org/wage.html or write to policy@campaign.example.'
    await call('kb-ingest', { title: 'Wage plan', text: `${wage}\n\n${'Other plank text goes here. '.repeat(40)}` })
    const figures = await call<{ results: Array<{ text: string }> }>('kb-query', { query: 'minimum wage per hour', limit: 1 })
    t.equal(figures.results[0].text, wage, 'figures, titles, URLs and addresses come back as written')
  })

  await t.test('volunteers: roster, detail, and matches ranked by score', async t => {
    const base = { availability: ['sat-am'], location: { lat: 52.5, lon: 13.4 } }
    await call('save-volunteer', { ...base, name: 'Near Nia', email: 'nia@x.test', skills: ['canvassing'] })
    await call('save-volunteer', { ...base, name: 'Far Finn', email: 'finn@x.test', skills: ['canvassing'], location: { lat: 53.5, lon: 13.4 } })
    const wrong = await call<{ volunteer_id: string }>('save-volunteer', { ...base, name: 'Phone Pia', email: 'pia@x.test', skills: ['phone'], availability: [] })
    const list = await call<{ volunteers: Array<{ name: string }> }>('list-volunteers', { skill: 'CANVASSING' })
    t.same(list.volunteers.map(v => v.name), ['Far Finn', 'Near Nia'])
    const matches = await call<{ matches: Array<{ name: string, score: number }> }>('match-volunteer', { skills: ['canvassing'], slots: ['sat-am'], location: base.location, max_km: 25 })
    t.same(matches.matches.map(m => [m.name, m.score]), [['Near Nia', 1], ['Far Finn', 0.8], ['Phone Pia', 0.2]])
    t.match(await call('volunteer-detail', { volunteer_id: wrong.volunteer_id }), { name: 'Phone Pia', email: 'pia@x.test', skills: ['phone'] })
    await t.rejects(call('volunteer-detail', { volunteer_id: 'nobody' }), new ServerFunctionError(404, 'no volunteer "nobody"'))
    t.equal(await statusOf(call('save-volunteer', { ...base, name: 'X', email: 'not-an-email' })), 400)
  })

  await t.test('fundraising: the per-donor limit per election, totals, and asks within the limit', async t => {
    const gift = async (amount: number, on?: string): Promise<{ remaining_cents: number, election_total_cents: number, election: string, donor_id: string }> =>
      await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'Dora@X.test', amount_cents: amount, ...(on !== undefined ? { received_on: on } : {}) })
    const today = new Date().toISOString().slice(0, 10)
    const first = await gift(6000)
    t.match(first, { election_total_cents: 6000, remaining_cents: 4000 })
    await t.rejects(gift(5000), new ServerFunctionError(409, `a donation of $50.00 would bring Dora Donor's total toward the ${first.election.replace('-', ' ')} election to $110.00, over the per-donor limit of $100.00 per election ($40.00 remaining)`))
    const full = await gift(4000)
    t.match(full, { election_total_cents: 10_000, remaining_cents: 0 })
    t.equal(await statusOf(gift(1)), 409)
    const earlier = `${Number(today.slice(0, 4)) - 3}-06-01`
    t.match(await gift(9000, earlier), { election_total_cents: 9000 }, 'an earlier election has its own limit')
    t.equal(await statusOf(call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 10 })), 409, 'the same e-mail in other case is the same donor')
    const donors = await call<{ limit_cents: number, donors: Array<{ name: string, election_total_cents: number, lifetime_total_cents: number, remaining_cents: number, donation_count: number }> }>('list-donors', {})
    t.match(donors, { limit_cents: 10_000, donors: [{ name: 'Dora Donor', election_total_cents: 10_000, lifetime_total_cents: 19_000, remaining_cents: 0, donation_count: 3 }] })
    const maxed = await call<{ suggested_ask_cents: number, body: string }>('draft-solicitation', { donor_id: full.donor_id })
    t.equal(maxed.suggested_ask_cents, 0, 'no ask beyond the limit')
    t.match(maxed.body, /most the law allows/)
    const fresh = await call<{ donor_id: string }>('record-donation', { donor_name: 'Eve Ewing', donor_email: 'eve@x.test', amount_cents: 2000 })
    const letter = await call<{ subject: string, body: string, suggested_ask_cents: number }>('draft-solicitation', { donor_id: fresh.donor_id, purpose: 'the housing campaign' })
    t.equal(letter.suggested_ask_cents, 3000, '1.5 × the largest gift, rounded up to $5')
    t.match(letter, { subject: 'Eve, will you stand with us again?', body: /Dear Eve,[\s\S]*the housing campaign[\s\S]*\$30\.00/ })
    t.equal(await statusOf(call('draft-solicitation', { donor_id: 'nobody' })), 404)
  })

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

  await kernel.stop()
  const env = open({ path: join(kernel.config.stateDir, 'berth.mdb'), readOnly: true })
  t.teardown(async () => { await env.close() })
  const feedback = [...env.openDB({ name: 'campaign/feedback' }).getRange()]
  t.match(feedback.find(f => (f.key as string[])[1] === 'doc-1'), { key: ['knowledge-base', 'doc-1', 'dev-staff'], value: { is_positive: false, is_active: true } }, 'feedback survives in LMDB')
})
