// Compliance: the rules find each planted problem of a solicitation and a clean ad passes; then
// compliance-check and generate-report through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { amountsInCents, checkCompliance, loadRules } from '../../../../plugins/campaign/modules/compliance/compliance-rules.js'
import { donorId } from '../../../../plugins/campaign/modules/fundraising/fundraising.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { BAD_EMAIL, dayFromToday, fundraisingOf, GOOD_AD, storeReviewRecords } from '../fixtures/review.js'

t.test('compliance: the rules find each planted problem, and a clean ad passes', async t => {
  const engine = await localEngine()
  const rules = loadRules()
  const fundraising = fundraisingOf({ 'dora@x.test': [250_000, 50_000] })
  const bad = await checkCompliance(engine, rules, fundraising, { text: BAD_EMAIL, channel: 'email', day: '2026-05-10' })
  t.equal(bad.solicits, true)
  t.same(bad.findings.map(f => [f.rule_id, f.severity]), [
    ['DISCLAIMER', 'error'], ['EMAIL-OPT-OUT', 'error'], ['POSTAL-ADDRESS', 'error'], ['NOT-DEDUCTIBLE-NOTICE', 'error'],
    ['GOVERNMENT-ENDORSEMENT', 'error'], ['DEDUCTIBLE-CLAIM', 'error'], ['BEST-EFFORTS', 'warning'], ['ASK-OVER-LIMIT', 'warning']
  ])
  t.same(bad.findings.find(f => f.rule_id === 'GOVERNMENT-ENDORSEMENT')?.evidence, ['Friends, our plan is endorsed by the Elections Board.'])
  t.same(bad.findings.find(f => f.rule_id === 'ASK-OVER-LIMIT')?.evidence, ['$5,000 is more than the per-donor limit of $3,500.00 per election'])
  t.match(bad.not_applied, [{ rule_id: 'DISCLAIMER-SPONSOR', reason: 'no sponsor given' }, { rule_id: 'CONTRIBUTION-LIMIT', reason: 'no amount_cents or donor_email given' }])

  const good = await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council', day: '2026-05-10' })
  t.same(good.findings, [], 'disclaimer present and naming the sponsor; no request for money')
  t.ok(good.applied.includes('DISCLAIMER-SPONSOR'))
  const wrongSponsor = await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', sponsor: 'Friends of Maria', day: '2026-05-10' })
  t.same(wrongSponsor.findings.map(f => f.evidence[0]), ['the disclaimer “Paid for by Lopez for Council.” does not name Friends of Maria'])

  const over = await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 60_000, donor_email: 'Dora@X.test', day: '2026-05-10' })
  t.same(over.findings.map(f => [f.rule_id, f.severity, f.evidence[0]]), [['CONTRIBUTION-LIMIT', 'error', 'over the limit by $100.00: $3,000.00 given toward the 2026 primary election + $600.00 = $3,600.00 of the $3,500.00 limit']])
  t.same(over.donor, { donor_id: donorId('dora@x.test'), election: '2026-primary', donations: 2, given_cents: 300_000 })
  t.equal((await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 20_000, donor_email: 'dora@x.test', day: '2026-05-10' })).findings[0].severity, 'warning', '$3,200 of $3,500: near the limit')
  t.same((await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 60_000, donor_email: 'dora@x.test', day: '2026-06-03' })).findings, [], 'the day after the primary, a gift counts toward the general: another limit')
  t.same((await checkCompliance(engine, rules, fundraising, { text: GOOD_AD, channel: 'ad', amount_cents: 100, day: '2026-11-04' })).not_applied.find(r => r.rule_id === 'CONTRIBUTION-LIMIT'),
    { rule_id: 'CONTRIBUTION-LIMIT', reason: 'no election cycle is configured on or after 2026-11-04' }, 'after the last configured cycle')
  t.same((await checkCompliance(engine, rules, fundraising, { text: 'Our gifts are not tax-deductible. Chip in today.', channel: 'post', day: '2026-05-10' })).findings.map(f => f.rule_id), ['DISCLAIMER', 'BEST-EFFORTS'], 'a denial is no deductibility claim')
  t.same(amountsInCents('Give $25, $1,000 or $2 million'), [{ text: '$25', cents: 2500 }, { text: '$1,000', cents: 100_000 }, { text: '$2 million', cents: 200_000_000 }])
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const readonly = await cookie('readonly')
  await storeReviewRecords(call)

  await t.test('compliance-check stores each check; generate-report reports the period with its sources', async t => {
    const year = new Date().toISOString().slice(0, 4)
    await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 330_000, donor_address: '12 Elm Street, Springfield, IL 62701', donor_occupation: 'Teacher', donor_employer: 'Springfield Schools' })
    await call('record-donation', { donor_name: 'Sam Small', donor_email: 'sam@x.test', amount_cents: 2_500 })
    const soon = dayFromToday(10)
    await call('analyze-regulation', { title: 'Filing Rule', text: `SECTION 1. Filing.\nEach committee shall file its year-end report no later than ${soon.written}.` })

    interface Checked { check_id: string, passed: boolean, counts: Record<string, number>, findings: Array<{ rule_id: string }>, sources: string[], resource_id: string, engine: string }
    const bad = await call<Checked>('compliance-check', { text: BAD_EMAIL, channel: 'email' })
    t.match(bad, { passed: false, counts: { error: 6, warning: 2, info: 0 }, engine: /^local/ })
    t.equal(bad.resource_id, bad.check_id)
    const limit = await call<Checked>('compliance-check', { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council', amount_cents: 50_000, donor_email: 'dora@x.test' })
    t.same(limit.findings.map(f => f.rule_id), ['CONTRIBUTION-LIMIT'], 'the fundraising store\'s $3,300 + $500 is over the limit')
    t.match(limit.sources[1], /^\[2\] fundraising: donor [0-9a-f]{16}, 1 gift toward the \d{4} general election, \$3,300\.00; limit \$3,500\.00$/)
    const good = await call<Checked>('compliance-check', { text: GOOD_AD, channel: 'ad', sponsor: 'Lopez for Council' })
    t.match(good, { passed: true, findings: [] })
    t.equal(await statusOf(call('compliance-check', { text: GOOD_AD, channel: 'ad' }, readonly)), 403, 'a check is stored: staff only')
    t.equal(await statusOf(call('compliance-check', { text: GOOD_AD, channel: 'billboard' })), 400, 'an unknown channel')

    interface Report {
      report_id: string, resource_id: string, summary: string, summary_method: string, sources: string[], engine: string
      donations: { donations: number, total_cents: number, near_or_over_limit: Array<{ name: string, standing: string }>, itemized_donors: Array<{ name: string }>, sources: string[] }
      checks: { checks: number, passed: number, failed: number, by_rule: Array<{ rule_id: string, findings: number }>, sources: string[] }
      deadlines: { deadlines: Array<{ date: string, when: string, regulation: string }>, sources: string[] }
    }
    const report = await call<Report>('generate-report', { period_from: `${year}-01-01`, period_to: new Date().toISOString().slice(0, 10) })
    t.match(report.donations, { donations: 2, total_cents: 332_500, near_or_over_limit: [{ name: 'Dora Donor', standing: 'near' }], itemized_donors: [{ name: 'Dora Donor' }] })
    t.match(report.checks, { checks: 3, passed: 1, failed: 2 })
    t.equal(report.checks.by_rule.find(r => r.rule_id === 'DISCLAIMER')?.findings, 1)
    t.same(report.deadlines.deadlines.filter(d => d.regulation === 'Filing Rule').map(d => [d.date, d.when]), [[soon.iso, 'upcoming']], 'a deadline in the 30 days after the period')
    t.ok([report.donations, report.checks, report.deadlines].every(section => section.sources.length > 0 && section.sources.every(line => report.sources.includes(line))), 'each section cites its sources')
    t.match(report, { summary_method: 'rules', summary: /^From \d{4}-01-01 to .*: 2 donations totalling \$3,325\.00 from 2 donors; 1 near or over the \$3,500\.00 limit/, engine: /^local/ })
    t.equal(report.resource_id, report.report_id)
    await t.rejects(call('generate-report', { period_from: `${year}-05-01`, period_to: `${year}-04-01` }), new ServerFunctionError(400, 'invalid arguments: /period_to: comes before period_from', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('generate-report', { period_from: `${year}-01-01`, period_to: `${year}-02-01` }, readonly)), 403)
    await t.rejects(call('generate-report', { period_from: `${year}-02-30`, period_to: `${year}-03-01` }), new ServerFunctionError(400, `invalid arguments: /period_from: "${year}-02-30" is not a calendar day`, 'BERTH_BAD_REQUEST'))
  })
})
