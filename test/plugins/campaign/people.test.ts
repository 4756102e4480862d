// Who sees what of a person, both ways, through every server function that returns people: each role
// gets exactly the fields its view allows (the expected fields written out here, apart from the
// plugin's views), matches are scored on a coarse position for roles that may not see where a
// volunteer lives, the table in docs/campaign.md is the views', and one e-mail is one volunteer.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ServerFunctionError } from '../../../plugins/campaign/client.js'
import { ATTRIBUTION_AUDIENCE, ATTRIBUTION_FIELDS, type PeopleView, type ViewField } from '../../../plugins/campaign/people.js'
import { manifest as adminManifest } from '../../../plugins/campaign/modules/admin/manifest.js'
import { manifest as callsManifest } from '../../../plugins/campaign/modules/call-intelligence/manifest.js'
import { manifest as eventsManifest } from '../../../plugins/campaign/modules/events/manifest.js'
import { manifest as fundraisingManifest } from '../../../plugins/campaign/modules/fundraising/manifest.js'
import { manifest as peopleManifest } from '../../../plugins/campaign/modules/people/manifest.js'
import { manifest as sendingManifest } from '../../../plugins/campaign/modules/sending/manifest.js'
import { manifest as volunteersManifest } from '../../../plugins/campaign/modules/volunteers/manifest.js'
import { MANIFESTS } from '../../../plugins/campaign/modules/catalogue.js'
import { USER_VIEW } from '../../../plugins/campaign/modules/admin/admin.js'
import { CALL_VIEW } from '../../../plugins/campaign/modules/call-intelligence/call-intelligence.js'
import { ATTENDANCE_VIEW, RSVP_VIEW } from '../../../plugins/campaign/modules/events/event-book.js'
import { DONATION_VIEW, DONOR_VIEW } from '../../../plugins/campaign/modules/fundraising/fundraising.js'
import { PERSON_VIEW } from '../../../plugins/campaign/modules/people/filter.js'
import { SEND_LOG_VIEW } from '../../../plugins/campaign/modules/sending/messenger.js'
import { SMS_REPLY_VIEW } from '../../../plugins/campaign/modules/sending/sms-replies.js'
import { VOLUNTEER_VIEW } from '../../../plugins/campaign/modules/volunteers/volunteers.js'
import { ROLES, type Role } from '../../../plugins/campaign/roles.js'
import { campaignApp, statusOf } from '../../support/campaign.js'

type Fields = readonly string[] | 403
interface Case { name: string, args: (role: Role) => object, pick: (result: Record<string, unknown>) => unknown, fields: Record<Role, Fields> }

const VOLUNTEER_ALL = ['availability', 'email', 'location', 'name', 'skills', 'updated_at', 'volunteer_id']
const VOLUNTEER_SHOWN = ['availability', 'name', 'skills', 'updated_at', 'volunteer_id']
const MATCH_ALL = ['availability', 'distance', 'distance_km', 'name', 'score', 'skills', 'volunteer_id']
const MATCH_SHOWN = ['availability', 'distance', 'name', 'score', 'skills', 'volunteer_id']
const DONOR_TOTALS = ['created_at', 'cycle_total_cents', 'donation_count', 'donor_id', 'election', 'election_total_cents', 'last_donation_on', 'lifetime_total_cents', 'missing_itemization', 'name', 'remaining_cents', 'updated_at']
const DONOR_ALL = [...DONOR_TOTALS, 'address', 'email', 'employer', 'occupation']
const DONATION_SHOWN = ['amount_cents', 'designation', 'donation_id', 'donor_id', 'election', 'history', 'received_on', 'recorded_at', 'refunded_cents']
const DONATION_ALL = [...DONATION_SHOWN, 'recorded_by']
const OUTCOME_ALL = [...DONATION_ALL, 'cycle_total_cents', 'election_total_cents', 'remaining_cents']
const USER_ALL = ['email', 'last_login_at', 'logins', 'name', 'role', 'sub']
const CALL_SHOWN = ['call_id', 'called_at', 'caller', 'follow_up', 'issues', 'outcome', 'sentiment', 'turns']
const CALL_ALL = [...CALL_SHOWN, 'contact', 'recorded_by']

const place = { lat: 52.52437, lon: 13.41053 }
const first = (key: string) => (result: Record<string, unknown>): unknown => (result[key] as unknown[])[0]

t.test('each role sees exactly the fields of a person its role may see, in every function returning people', async t => {
  const { call, login, staff } = await campaignApp(t)
  const cookies: Record<Role, string> = { admin: await login('admin'), staff, volunteer: await login('volunteer'), readonly: await login('readonly') }
  const vera = await call<{ volunteer_id: string }>('save-volunteer', { name: 'Vera Volunteer', email: 'vera@home.test', skills: ['canvassing'], availability: ['sat-am'], location: place })
  const dora = await call<{ donor_id: string, donation_id: string }>('record-donation', {
    donor_name: 'Dora Donor', donor_email: 'dora@home.test', amount_cents: 25_000, donor_address: '12 Elm Street, Springfield, IL 62701', donor_occupation: 'Teacher', donor_employer: 'Springfield Schools'
  })
  await call('correct-donation', { donation_id: dora.donation_id, amount_cents: 24_000, reason: 'the check was for $240' })
  await call('analyze-transcript', { transcript: 'Volunteer: Hi, can we count on your vote?\nVoter: Count me in!', caller: 'Vera Volunteer', contact: 'Carl Contact' })

  const cases: Case[] = [
    { name: 'list-volunteers', args: () => ({}), pick: first('volunteers'), fields: { admin: VOLUNTEER_ALL, staff: VOLUNTEER_ALL, volunteer: VOLUNTEER_SHOWN, readonly: VOLUNTEER_SHOWN } },
    { name: 'volunteer-detail', args: () => ({ volunteer_id: vera.volunteer_id }), pick: r => r, fields: { admin: VOLUNTEER_ALL, staff: VOLUNTEER_ALL, volunteer: VOLUNTEER_SHOWN, readonly: VOLUNTEER_SHOWN } },
    { name: 'save-volunteer', args: () => ({ volunteer_id: vera.volunteer_id, name: 'Vera Volunteer', email: 'vera@home.test', skills: ['canvassing'], availability: ['sat-am'], location: place }), pick: r => r, fields: { admin: VOLUNTEER_ALL, staff: VOLUNTEER_ALL, volunteer: 403, readonly: 403 } },
    { name: 'match-volunteer', args: () => ({ skills: ['canvassing'], location: place }), pick: first('matches'), fields: { admin: MATCH_ALL, staff: MATCH_ALL, volunteer: MATCH_SHOWN, readonly: MATCH_SHOWN } },
    { name: 'list-donors', args: () => ({}), pick: first('donors'), fields: { admin: DONOR_ALL, staff: DONOR_ALL, volunteer: 403, readonly: DONOR_TOTALS } },
    { name: 'list-donations', args: () => ({ donor_id: dora.donor_id }), pick: r => r.donor, fields: { admin: DONOR_ALL, staff: DONOR_ALL, volunteer: 403, readonly: DONOR_TOTALS } },
    { name: 'list-donations', args: () => ({ donor_id: dora.donor_id }), pick: first('donations'), fields: { admin: DONATION_ALL, staff: DONATION_ALL, volunteer: 403, readonly: DONATION_SHOWN } },
    { name: 'record-donation', args: () => ({ donor_name: 'Dora Donor', donor_email: 'dora@home.test', amount_cents: 100 }), pick: r => r, fields: { admin: OUTCOME_ALL, staff: OUTCOME_ALL, volunteer: 403, readonly: 403 } },
    { name: 'correct-donation', args: role => ({ donation_id: dora.donation_id, amount_cents: 23_000 + ROLES.indexOf(role), reason: 'counted again' }), pick: r => r, fields: { admin: OUTCOME_ALL, staff: OUTCOME_ALL, volunteer: 403, readonly: 403 } },
    { name: 'refund-donation', args: () => ({ donation_id: dora.donation_id, amount_cents: 1, reason: 'asked for a cent back' }), pick: r => r, fields: { admin: OUTCOME_ALL, staff: OUTCOME_ALL, volunteer: 403, readonly: 403 } },
    { name: 'admin-list-users', args: () => ({}), pick: first('users'), fields: { admin: USER_ALL, staff: 403, volunteer: 403, readonly: 403 } },
    { name: 'call-trends', args: () => ({}), pick: first('calls'), fields: { admin: CALL_ALL, staff: CALL_ALL, volunteer: 403, readonly: CALL_SHOWN } }
  ]
  for (const { name, args, pick, fields } of cases) {
    for (const role of ROLES) {
      const expected = fields[role]
      const outcome = call<Record<string, unknown>>(name, args(role), cookies[role])
      if (expected === 403) {
        t.equal(await statusOf(outcome), 403, `${role} may not call ${name}`)
        continue
      }
      t.same(Object.keys(pick(await outcome) as object).sort(), [...expected].sort(), `${role} → ${name}: the fields ${role} sees`)
    }
  }

  const historyOf = async (cookie: string): Promise<Array<Record<string, unknown>>> =>
    (await call<{ donations: Array<{ donation_id: string, history: Array<Record<string, unknown>> }> }>('list-donations', { donor_id: dora.donor_id }, cookie)).donations.find(d => d.donation_id === dora.donation_id)?.history ?? []
  t.same(Object.keys((await historyOf(cookies.readonly))[0]).sort(), ['action', 'at', 'changes', 'reason'], 'readonly sees what changed, not who changed it')
  t.match((await historyOf(staff))[0], { changed_by: 'staff@campaign.test', action: 'corrected', changes: { amount_cents: { from: 25_000, to: 24_000 } } }, 'staff sees who changed it')

  for (const role of ROLES) {
    t.match(await call('check-auth', {}, cookies[role]), { email: `${role}@campaign.test`, name: /User$/ }, `${role} sees their own e-mail and name in check-auth`)
  }
})

t.test('match-volunteer: roles that may not see where a volunteer lives get a score from a position rounded to 0.01° and no distance', async t => {
  const { call, login } = await campaignApp(t)
  const readonly = await login('readonly')
  const volunteer = await login('volunteer')
  await call('save-volunteer', { name: 'Vera Volunteer', email: 'vera@home.test', location: place })
  // The task is at her door, within 50 m: the exact position gives the whole distance part.
  const task = { location: place, max_km: 0.05 }
  const exact = await call<{ matches: Array<Record<string, unknown>> }>('match-volunteer', task)
  t.match(exact.matches[0], { name: 'Vera Volunteer', distance: 1, distance_km: 0, score: 1 }, 'staff: scored on her position')
  for (const cookie of [readonly, volunteer]) {
    const coarse = await call<{ matches: Array<Record<string, unknown>> }>('match-volunteer', task, cookie)
    t.match(coarse.matches[0], { name: 'Vera Volunteer', distance: 0, score: 0.8 }, 'the rounded position (52.52, 13.41) is about 500 m away: nothing of the distance part')
    t.notOk('distance_km' in coarse.matches[0])
  }
})

t.test('attribution fields are shown to admin and staff only, in every function that returns them', async t => {
  const { call, login, staff } = await campaignApp(t)
  const readonly = await login('readonly')
  await call('extract-commitments', { text: 'We will build 500 homes by 2030.', actor: 'Maria Lopez' })
  await call('kb-ingest', { title: 'Housing plan', text: 'We will build 500 affordable homes near transit by 2030.' })
  await call('generate-copy', { topic: 'affordable homes', channel: 'sms' })
  await call('analyze-transcript', { transcript: 'Volunteer: Hi!\nVoter: Count me in.' })
  const dora = await call<{ donor_id: string }>('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@home.test', amount_cents: 1000 })
  const keysOf = (value: unknown): string[] => Array.isArray(value) ? value.flatMap(keysOf) : value !== null && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]) : []
  const readers: Array<[string, object, string]> = [
    ['accountability-report', {}, 'recorded_by'],
    ['list-copy-history', {}, 'created_by'],
    ['call-trends', {}, 'recorded_by'],
    ['list-donations', { donor_id: dora.donor_id }, 'recorded_by']
  ]
  for (const [name, args, field] of readers) {
    t.ok(keysOf(await call(name, args, staff)).includes(field), `staff sees ${field} in ${name}`)
    t.notOk(keysOf(await call(name, args, readonly)).some(k => (ATTRIBUTION_FIELDS as readonly string[]).includes(k)), `readonly sees no attribution in ${name}`)
  }
  t.same(ATTRIBUTION_AUDIENCE, ['staff'])
})

t.test('docs/campaign.md: the table of who sees what is the views\'', async t => {
  const doc = readFileSync(new URL('../../../docs/campaign.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('### Who sees what of a person'))
  const table = section.slice(section.indexOf('\n|')).split('\n\n')[0].trim().split('\n').slice(2)
  const documented = table.map(row => {
    const [record, fields, ...roles] = row.split('|').slice(1, -1).map(cell => cell.trim())
    return `${record}: ${[...fields.matchAll(/`([a-z_]+)`/g)].map(m => m[1]).sort().join(' ')} → ${ROLES.filter((_, i) => roles[i] === '✓').join(' ')}`
  })
  const registered = new Map(MANIFESTS.flatMap(manifest => Object.entries(manifest.views ?? {})))
  const made = [PERSON_VIEW, VOLUNTEER_VIEW, DONOR_VIEW, DONATION_VIEW, USER_VIEW, CALL_VIEW, RSVP_VIEW, ATTENDANCE_VIEW, SEND_LOG_VIEW, SMS_REPLY_VIEW] as unknown as Array<PeopleView<object>>
  t.same(made.map(view => view.kind).sort(), [...registered.keys()].sort(), 'a view is made of each record view the manifests declare')
  for (const view of made) t.equal(view.fields, registered.get(view.kind), `the ${view.kind} view is its manifest's`)
  const declared = [...registered].flatMap(([record, fields]) => {
    const groups = new Map<string, string[]>()
    for (const [field, audience] of Object.entries(fields) as Array<[string, readonly string[]]>) {
      const seenBy = ROLES.filter(role => role === 'admin' || audience.includes(role)).join(' ')
      groups.set(seenBy, [...(groups.get(seenBy) ?? []), field])
    }
    return [...groups].map(([seenBy, fields]) => `${record}: ${fields.sort().join(' ')} → ${seenBy}`)
  })
  declared.push(`attribution: ${[...ATTRIBUTION_FIELDS].sort().join(' ')} → admin ${ATTRIBUTION_AUDIENCE.join(' ')}`)
  t.same(documented.sort(), declared.sort())
})

/**
 * A manifest's view is exactly its record's fields: one it lacks is refused where the view is made
 * (PeopleView's constructor), and here, by the type check, a field the record no longer has.
 */
const exactly = <T extends object, F extends object>(view: PeopleView<T>, fields: F & { readonly [K in Exclude<keyof F, ViewField<T>>]: never }): [PeopleView<T>, object] => [view, fields]

t.test('each manifest\'s view names only fields of its record (the type check refuses a stale one)', async t => {
  const pairs = [
    exactly(PERSON_VIEW, peopleManifest.views.person),
    exactly(VOLUNTEER_VIEW, volunteersManifest.views.volunteer),
    exactly(DONOR_VIEW, fundraisingManifest.views.donor),
    exactly(DONATION_VIEW, fundraisingManifest.views.donation),
    exactly(USER_VIEW, adminManifest.views.user),
    exactly(CALL_VIEW, callsManifest.views.call),
    exactly(RSVP_VIEW, eventsManifest.views.rsvp),
    exactly(ATTENDANCE_VIEW, eventsManifest.views.attendance),
    exactly(SEND_LOG_VIEW, sendingManifest.views['send log']),
    exactly(SMS_REPLY_VIEW, sendingManifest.views['sms reply'])
  ]
  // @ts-expect-error a field the roster entry does not have
  pairs.push(exactly(RSVP_VIEW, { ...eventsManifest.views.rsvp, shoe_size: ['staff'] }))
  for (const [view, fields] of pairs.slice(0, -1)) t.equal(view.fields, fields, `the ${view.kind} view is its manifest's`)
})

t.test('save-volunteer: one e-mail address is one volunteer', async t => {
  const { call } = await campaignApp(t)
  const vera = await call<{ volunteer_id: string }>('save-volunteer', { name: 'Vera Volunteer', email: 'vera@home.test', skills: ['canvassing'], location: place })
  await t.rejects(call('save-volunteer', { name: 'Vera V.', email: 'Vera@Home.test', skills: ['phone'], location: place }),
    new ServerFunctionError(409, `Vera Volunteer (volunteer_id ${vera.volunteer_id}) has the e-mail Vera@Home.test already; save with that volunteer_id to update them`, 'BERTH_EMAIL_TAKEN'), 'a second sign-up with her address, in other case')
  const updated = await call<{ volunteer_id: string, skills: string[] }>('save-volunteer', { volunteer_id: vera.volunteer_id, name: 'Vera Volunteer', email: 'vera@home.test', skills: ['canvassing', 'phone'], location: place })
  t.match(updated, { volunteer_id: vera.volunteer_id, skills: ['canvassing', 'phone'] }, 'saving with her id updates her')
  const sam = await call<{ volunteer_id: string }>('save-volunteer', { name: 'Sam Small', email: 'sam@home.test', location: place })
  t.equal(await statusOf(call('save-volunteer', { volunteer_id: sam.volunteer_id, name: 'Sam Small', email: 'vera@home.test', location: place })), 409, 'nor can another volunteer take her address')
  const { volunteers } = await call<{ volunteers: Array<{ name: string }> }>('list-volunteers', {})
  t.same(volunteers.map(v => v.name), ['Sam Small', 'Vera Volunteer'], 'no duplicate on the roster')
})
