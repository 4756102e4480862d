// Donations: real calendar days that are not in the future, contribution limits per election (a
// cycle's primary and general, configured in [campaign].election_cycles, or the federal cycles), the
// itemisation fields above the threshold, corrections and refunds with their history, records stored
// before these existed, and the election cycles refused at start.
import t from 'tap'
import { open } from 'lmdb'
import campaign from '../../../../plugins/campaign/index.js'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { Elections, federalGeneralElection } from '../../../../plugins/campaign/modules/fundraising/elections.js'
import { donorId, Fundraising, type StoredDonation, type StoredDonor } from '../../../../plugins/campaign/modules/fundraising/fundraising.js'
import { shiftDay } from '../../../../plugins/campaign/text/due-dates.js'
import { campaignApp, campaignStoreOn, statusOf } from '../../../support/campaign.js'
import { testKernel } from '../../../support/kernel.js'
import { tempDir } from '../../../support/tmp.js'

const today = new Date().toISOString().slice(0, 10)
/**
 * The current cycle's primary: two days ago (so that the day after it is not in the future even just
 * after midnight UTC, when tomorrow is today nowhere yet), or in December of last year when that would
 * leave no day of this year before it.
 */
const primary = today.slice(5) >= '01-04' ? shiftDay(today, -2) : `${Number(today.slice(0, 4)) - 1}-12-10`
const CYCLES = [
  { name: 'previous', primary: shiftDay(primary, -400), general: shiftDay(primary, -300) },
  { name: 'current', primary, general: shiftDay(primary, 90) }
]
const dora = { donor_name: 'Dora Donor', donor_email: 'dora@home.test', donor_address: '12 Elm Street, Springfield, IL 62701', donor_occupation: 'Teacher', donor_employer: 'Springfield Schools' }

interface Outcome { donation_id: string, donor_id: string, election: string, amount_cents: number, refunded_cents: number, election_total_cents: number, remaining_cents: number, cycle_total_cents: number }

t.test('elections: federal general elections, the cycle of a day, the election a gift counts toward', async t => {
  t.same([2024, 2026, 2028, 2030].map(federalGeneralElection), ['2024-11-05', '2026-11-03', '2028-11-07', '2030-11-05'], 'the Tuesday after the first Monday of November')
  const federal = new Elections([])
  t.same(['2025-03-01', '2026-11-03', '2026-11-04', '2027-12-31'].map(day => federal.nextOn(day)?.id), ['2026-general', '2026-general', '2028-general', '2028-general'])
  t.throws(() => federal.designate('received_on', '2026-05-01', 'primary'), { message: 'invalid arguments: /election: the 2026 cycle has no primary configured ([campaign].election_cycles)' })

  const configured = new Elections([{ name: '2026', primary: '2026-06-02', general: '2026-11-03' }, { name: '2024', primary: '2024-03-05', general: '2024-11-05' }])
  t.same(['2024-01-10', '2024-03-06', '2025-01-01', '2026-06-02', '2026-06-03'].map(day => configured.nextOn(day)?.id), ['2024-primary', '2024-general', '2026-primary', '2026-primary', '2026-general'])
  t.equal(configured.nextOn('2026-11-04'), undefined, 'none after the last configured cycle')
  t.equal(configured.designate('received_on', '2026-05-01', 'general').id, '2026-general', 'a gift designated for the general before the primary')
  t.throws(() => configured.designate('received_on', '2026-07-01', 'primary'), { message: 'invalid arguments: /election: a gift received on 2026-07-01 cannot count toward the 2026 primary, held on 2026-06-02' })
  t.throws(() => configured.designate('received_on', '2027-01-01', null), { message: 'invalid arguments: /received_on: no election cycle is configured on or after 2027-01-01 ([campaign].election_cycles)' })

  const refusals: Array<[object[], RegExp]> = [
    [[{ name: '2026', primary: '2026-02-30', general: '2026-11-03' }], /^\[campaign\]\.election_cycles\[0\]\.primary: "2026-02-30" is not a calendar day/],
    [[{ name: '2026', primary: '2026-11-04', general: '2026-11-03' }], /the primary \(2026-11-04\) must come before the general election \(2026-11-03\)/],
    [[{ name: 'a', general: '2026-11-03' }, { name: 'b', general: '2026-11-03' }], /cycles "a" and "b" have the same general election/],
    [[{ name: 'a', general: '2024-11-05' }, { name: 'a', general: '2026-11-03' }], /two cycles have one name/],
    [[{ name: '2024', general: '2024-11-05' }, { name: '2026', primary: '2024-10-01', general: '2026-11-03' }], /the primary of "2026" \(2024-10-01\) is not after the general election of "2024" \(2024-11-05\)/]
  ]
  for (const [cycles, message] of refusals) t.throws(() => new Elections(cycles as never), message)
  const kernel = await testKernel(t, { plugins: [campaign], config: { campaign: { election_cycles: [{ name: '2026', primary: '2026-06-31', general: '2026-11-03' }] } }, noStart: true })
  await t.rejects(kernel.start(), /plugin "campaign" failed during setup: \[campaign\]\.election_cycles\[0\]\.primary: "2026-06-31" is not a calendar day/, 'refused at start')
})

t.test('record-donation: calendar days not in the future, limits per election, itemisation above the threshold', async t => {
  const { call, login } = await campaignApp(t, { election_cycles: CYCLES })
  const year = Number(today.slice(0, 4))
  await t.rejects(call('record-donation', { ...dora, amount_cents: 5000, received_on: `${year}-02-30` }), new ServerFunctionError(400, `invalid arguments: /received_on: "${year}-02-30" is not a calendar day`, 'BERTH_BAD_REQUEST'))
  await t.rejects(call('record-donation', { ...dora, amount_cents: 5000, received_on: `${year + 5}-03-01` }), new ServerFunctionError(400, `invalid arguments: /received_on: ${year + 5}-03-01 is in the future`, 'BERTH_BAD_REQUEST'))
  t.equal(await statusOf(call('record-donation', { ...dora, amount_cents: 5000, received_on: shiftDay(today, 2) })), 400, 'the day after tomorrow is in the future everywhere')

  const beforePrimary = await call<Outcome>('record-donation', { ...dora, amount_cents: 300_000, received_on: shiftDay(primary, -1) })
  t.match(beforePrimary, { election: 'current-primary', election_total_cents: 300_000, remaining_cents: 50_000, cycle_total_cents: 300_000 })
  const afterPrimary = await call<Outcome>('record-donation', { ...dora, amount_cents: 300_000, received_on: shiftDay(primary, 1) })
  t.match(afterPrimary, { election: 'current-general', election_total_cents: 300_000, remaining_cents: 50_000, cycle_total_cents: 600_000 }, 'the general has a limit of its own, in the same calendar year')
  await t.rejects(call('record-donation', { ...dora, amount_cents: 60_000, received_on: shiftDay(primary, -1) }), new ServerFunctionError(409,
    'a donation of $600.00 would bring Dora Donor\'s total toward the current primary election to $3,600.00, over the per-donor limit of $3,500.00 per election ($500.00 remaining)', 'BERTH_DONATION_OVER_LIMIT'))
  await t.rejects(call('record-donation', { ...dora, amount_cents: 1000, received_on: shiftDay(primary, 1), election: 'primary' }), new ServerFunctionError(400,
    `invalid arguments: /election: a gift received on ${shiftDay(primary, 1)} cannot count toward the current primary, held on ${primary}`, 'BERTH_BAD_REQUEST'))
  t.match(await call<Outcome>('record-donation', { ...dora, amount_cents: 40_000, received_on: shiftDay(primary, -300) }), { election: 'previous-general', election_total_cents: 40_000 }, 'a gift of the previous cycle')
  t.match(await call<Outcome>('record-donation', { ...dora, amount_cents: 20_000, received_on: shiftDay(primary, -2), election: 'general' }), { election: 'current-general', election_total_cents: 320_000 }, 'designated for the general before the primary')

  const sam = { donor_name: 'Sam Small', donor_email: 'sam@home.test' }
  await call('record-donation', { ...sam, amount_cents: 15_000 })
  await t.rejects(call('record-donation', { ...sam, amount_cents: 10_000 }), new ServerFunctionError(409,
    'a donation of $100.00 would bring Sam Small\'s gifts in the current cycle to $250.00, over the itemisation threshold of $200.00: give the donor\'s address, occupation and employer (donor_address, donor_occupation, donor_employer)', 'BERTH_ITEMIZATION_REQUIRED'))
  await t.rejects(call('record-donation', { ...sam, amount_cents: 10_000, donor_occupation: 'Nurse' }), { status: 409, message: /give the donor's address and employer \(donor_address, donor_employer\)$/ }, 'only what is still missing is asked for')
  t.match(await call<Outcome>('record-donation', { ...sam, amount_cents: 10_000, donor_address: '4 Oak Lane, Springfield, IL 62702', donor_occupation: 'Nurse', donor_employer: 'Mercy Hospital' }), { cycle_total_cents: 25_000 })
  t.match(await call<Outcome>('record-donation', { ...sam, amount_cents: 1000 }), { cycle_total_cents: 26_000 }, 'the fields are on record now')

  const { donors, limit_cents: limit, itemize_above_cents: threshold, election } = await call<{ limit_cents: number, itemize_above_cents: number, election: { id: string, date: string }, donors: Array<Record<string, unknown>> }>('list-donors', {})
  t.same({ limit, threshold, election }, { limit: 350_000, threshold: 20_000, election: { id: 'current-general', cycle: 'current', kind: 'general', date: shiftDay(primary, 90) } })
  t.match(donors, [
    { name: 'Dora Donor', election: 'current-general', election_total_cents: 320_000, remaining_cents: 30_000, cycle_total_cents: 620_000, lifetime_total_cents: 660_000, donation_count: 4, occupation: 'Teacher', missing_itemization: [] },
    { name: 'Sam Small', election_total_cents: 26_000, address: '4 Oak Lane, Springfield, IL 62702', employer: 'Mercy Hospital', missing_itemization: [] }
  ])
  const readonly = await login('readonly')
  t.notOk('address' in (await call<{ donors: Array<Record<string, unknown>> }>('list-donors', {}, readonly)).donors[1], 'readonly does not see the address')
})

t.test('correct-donation and refund-donation: checked like a new gift, each change in the history', async t => {
  const { call } = await campaignApp(t, { election_cycles: CYCLES })
  const gift = await call<Outcome>('record-donation', { ...dora, amount_cents: 300_000, received_on: shiftDay(primary, -1) })
  await call('record-donation', { ...dora, amount_cents: 300_000, received_on: shiftDay(primary, 1) })

  t.match(await call<Outcome>('correct-donation', { donation_id: gift.donation_id, amount_cents: 340_000, reason: 'the check was for $3,400' }), { amount_cents: 340_000, election_total_cents: 340_000, remaining_cents: 10_000 })
  await t.rejects(call('correct-donation', { donation_id: gift.donation_id, amount_cents: 360_000, reason: 'typo' }), new ServerFunctionError(409,
    'this correction would bring Dora Donor\'s total toward the current primary election to $3,600.00, over the per-donor limit of $3,500.00 per election ($3,500.00 remaining)', 'BERTH_DONATION_OVER_LIMIT'))
  await t.rejects(call('correct-donation', { donation_id: gift.donation_id, received_on: shiftDay(primary, 2), reason: 'received after the primary' }), {
    status: 409, message: /would bring Dora Donor's total toward the current general election to \$6,400\.00/
  }, 'moved after the primary, it counts toward the general')
  await t.rejects(call('correct-donation', { donation_id: gift.donation_id, amount_cents: 340_000, reason: 'again' }), new ServerFunctionError(400,
    'invalid arguments: nothing to correct: give amount_cents, received_on, election or a donor field that differs', 'BERTH_BAD_REQUEST'))
  t.equal(await statusOf(call('correct-donation', { donation_id: gift.donation_id, received_on: `${today.slice(0, 4)}-02-30`, reason: 'x' })), 400)
  await t.rejects(call('correct-donation', { donation_id: 'nope', amount_cents: 1, reason: 'x' }), new ServerFunctionError(404, 'no donation "nope"', 'BERTH_NOT_FOUND'))

  t.match(await call<Outcome>('refund-donation', { donation_id: gift.donation_id, amount_cents: 100_000, reason: 'the donor asked for $1,000 back' }), { refunded_cents: 100_000, election_total_cents: 240_000, remaining_cents: 110_000 })
  t.match(await call<Outcome>('record-donation', { ...dora, amount_cents: 100_000, received_on: shiftDay(primary, -1) }), { election_total_cents: 340_000 }, 'what was refunded may be given again')
  await t.rejects(call('correct-donation', { donation_id: gift.donation_id, amount_cents: 50_000, reason: 'x' }), new ServerFunctionError(409, '$1,000.00 of this donation was refunded; it cannot be corrected to less ($500.00)', 'BERTH_REFUND_EXCEEDS_GIFT'))
  await t.rejects(call('refund-donation', { donation_id: gift.donation_id, amount_cents: 300_000, reason: 'x' }), new ServerFunctionError(409, 'a refund of $3,000.00 is more than the $2,400.00 of this donation not yet refunded', 'BERTH_REFUND_EXCEEDS_GIFT'))
  t.match(await call<Outcome>('refund-donation', { donation_id: gift.donation_id, reason: 'the campaign returns the rest' }), { refunded_cents: 340_000, election_total_cents: 100_000 })
  await t.rejects(call('refund-donation', { donation_id: gift.donation_id, reason: 'x' }), new ServerFunctionError(409, 'this donation was refunded in full already', 'BERTH_REFUND_EXCEEDS_GIFT'))

  const { donations } = await call<{ donations: Array<{ donation_id: string, history: Array<Record<string, unknown>> }> }>('list-donations', { donor_id: gift.donor_id })
  t.match(donations.find(d => d.donation_id === gift.donation_id)?.history, [
    { action: 'corrected', changed_by: 'staff@campaign.test', reason: 'the check was for $3,400', changes: { amount_cents: { from: 300_000, to: 340_000 } }, at: /^\d{4}-/ },
    { action: 'refunded', reason: 'the donor asked for $1,000 back', changes: { refunded_cents: { from: 0, to: 100_000 } } },
    { action: 'refunded', reason: 'the campaign returns the rest', changes: { refunded_cents: { from: 100_000, to: 340_000 } } }
  ])
  const moved = await call<Outcome>('correct-donation', { donation_id: gift.donation_id, received_on: shiftDay(primary, 2), reason: 'received after the primary' })
  t.match(moved, { election: 'current-general', received_on: shiftDay(primary, 2) }, 'refunded in full, it can move to the general')
  await call('correct-donation', { donation_id: gift.donation_id, donor_employer: 'Springfield Public Schools', reason: 'she changed jobs' })
  const after = await call<{ donor: { employer: string }, donations: Array<{ donation_id: string, history: unknown[] }> }>('list-donations', { donor_id: gift.donor_id })
  t.equal(after.donor.employer, 'Springfield Public Schools', 'a donor field corrected with the donation')
  t.equal(after.donations.find(d => d.donation_id === gift.donation_id)?.history.length, 4, 'the donation\'s history holds the donation\'s changes only')
  t.equal(await statusOf(call('list-donations', { donor_id: 'nobody' })), 404)
})

t.test('records stored before elections, refunds and itemisation fields count toward the election of their day', async t => {
  const env = open({ path: tempDir(t), compression: false })
  t.teardown(async () => { await env.close() })
  const donors = env.openDB<StoredDonor, string>({ name: 'donors' })
  const donations = env.openDB<StoredDonation, [string, string, string]>({ name: 'donations' })
  const id = donorId('old@home.test')
  await donors.put(id, { donor_id: id, name: 'Olga Old', email: 'old@home.test', created_at: '2026-01-05T10:00:00.000Z' })
  await donations.put([id, today, 'd1'], { donation_id: 'd1', donor_id: id, amount_cents: 30_000, received_on: today, recorded_by: 'staff@campaign.test' })
  const store = campaignStoreOn(env)
  const fundraising = new Fundraising(store, { limitCents: 350_000, itemizeAboveCents: 20_000, elections: new Elections([]) })
  const next = new Elections([]).nextOn(today)?.id
  t.match(await fundraising.summary(await fundraising.donor(id) as never), { election: next, election_total_cents: 30_000, address: '', missing_itemization: ['address', 'occupation', 'employer'] }, 'over the threshold without the fields: they are listed as missing')
  t.match(await fundraising.donations(id), [{ election: next, refunded_cents: 0, designation: null, history: [] }])
  t.match(await fundraising.refund({ donation_id: 'd1', amount_cents: 10_000, reason: 'partly returned' }, 'staff@campaign.test'), { refunded_cents: 10_000, election_total_cents: 20_000 })
})

t.test('through the API, with a limit of $100.00', async t => {
  const { call } = await campaignApp(t, { contribution_limit_cents: 10_000 })

  await t.test('fundraising: the per-donor limit per election, totals, and asks within the limit', async t => {
    const gift = async (amount: number, on?: string): Promise<{ remaining_cents: number, election_total_cents: number, election: string, donor_id: string }> =>
      await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'Dora@X.test', amount_cents: amount, ...(on !== undefined ? { received_on: on } : {}) })
    const today = new Date().toISOString().slice(0, 10)
    const first = await gift(6000)
    t.match(first, { election_total_cents: 6000, remaining_cents: 4000 })
    await t.rejects(gift(5000), new ServerFunctionError(409, `a donation of $50.00 would bring Dora Donor's total toward the ${first.election.replace('-', ' ')} election to $110.00, over the per-donor limit of $100.00 per election ($40.00 remaining)`, 'BERTH_DONATION_OVER_LIMIT'))
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
})
