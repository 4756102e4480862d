// Filtering and searching people by role, both ways, in every function that lists or searches records
// holding people (and the people export): a role that sees a field filters on it and gets the right
// people; a role that does not is refused with 403, or, for a free-text search, matches nothing through
// that field. Then the attacks this closes, one by one: the e-mail rebuilt by searching, a phone number
// looked up, postcodes and consent enumerated, saved lists and their counts, a household's names, and
// a saved list's search text (an e-mail address, a phone number) shown back to a role that cannot see them.
import t from 'tap'
import { ServerFunctionError } from '../../../plugins/campaign/client.js'
import { shownFilter } from '../../../plugins/campaign/modules/people/filter.js'
import { ROLES, type Role } from '../../../plugins/campaign/roles.js'
import { campaignApp } from '../../support/campaign.js'
import { mailServer } from '../../support/smtp.js'

interface Named { name: string }
interface Case {
  fn: string
  /** What the case filters or searches on, for the assertions' names. */
  on: string
  args: object
  pick: (result: Record<string, unknown>) => unknown
  /** The roles besides admin that may call the function. */
  callers: readonly Role[]
  /** The roles besides admin that see the field. */
  seenBy: readonly Role[]
  /** What a role that sees the field gets. */
  seen: unknown
  /** A free-text search: what a role that does not see the field gets (no match through it); absent: such a role is refused. */
  unseen?: unknown
}

const READERS: readonly Role[] = ['staff', 'readonly']
const EVERYONE: readonly Role[] = ['staff', 'volunteer', 'readonly']
const STAFF: readonly Role[] = ['staff']
const names = (key: string) => (result: Record<string, unknown>): string[] => (result[key] as Named[]).map(p => p.name)
const HOUR_MS = 3_600_000

t.test('each role filters and searches only on the fields it sees, in every function that lists people', async t => {
  const mail = await mailServer(t)
  const { call, login, staff, baseUrl } = await campaignApp(t, { smtp_url: `smtp://127.0.0.1:${mail.port}`, mail_from: 'Campaign <hello@campaign.test>' })
  const cookies: Record<Role, string> = { admin: await login('admin'), staff, volunteer: await login('volunteer'), readonly: await login('readonly') }

  const ana = await call<{ person_id: string }>('save-person', { name: 'Ana Diaz', email: 'ana@x.test', phone: '+1 555 010 2000', address: '12 Elm St', postcode: '90210', city: 'Springfield', tags: ['housing', 'canvasser'], issues: ['rent'], consent: { email: true } })
  const ben = await call<{ person_id: string }>('save-person', { name: 'Ben Diaz', email: 'ben@x.test', phone: '+1 555 010 3000', address: '12 elm st.', postcode: '90210', city: 'Springfield', tags: ['housing'], consent: { email: true, sms: true } })
  await call('save-person', { name: 'Cy Young', email: 'cy@y.test', postcode: '10001', city: 'Shelbyville', tags: ['parks'], issues: ['transit'] })
  await call('record-donation', { donor_name: 'Ana Diaz', donor_email: 'ana@x.test', amount_cents: 5000 })
  const soon = Date.now() + 24 * HOUR_MS
  const event = await call<{ shifts: Array<{ shift_id: string }> }>('save-event', { title: 'Canvass', location: { text: 'Hall', lat: 52.5, lon: 13.4 }, shifts: [{ starts_at: new Date(soon).toISOString(), ends_at: new Date(soon + 2 * HOUR_MS).toISOString(), capacity: 5 }] })
  await call('rsvp-shift', { shift_id: event.shifts[0].shift_id, person_id: ana.person_id })
  await call('save-volunteer', { name: 'Vera Volunteer', email: 'vera@home.test', skills: ['canvassing'], location: { lat: 52.5, lon: 13.4 } })
  await call('save-volunteer', { name: 'Walt Phone', email: 'walt@home.test', skills: ['phone'], location: { lat: 52.5, lon: 13.4 } })
  await call('analyze-transcript', { transcript: 'Volunteer: Hi, can we count on your vote?\nVoter: Count me in!', caller: 'Vera Volunteer', contact: 'Carl Contact' })
  const sent = await call<{ send_id: string }>('send-email', { person_ids: [ana.person_id], subject: 'Hello', body: 'Hi {{first_name}}' })
  const lists = {
    postcode: await call<{ list_id: string }>('save-list', { name: 'Postcode 902', filter: { postcode_prefixes: ['902'] } }),
    texters: await call<{ list_id: string }>('save-list', { name: 'Texters', filter: { consent: 'sms' } }),
    housing: await call<{ list_id: string }>('save-list', { name: 'Housing', filter: { tags: ['housing'] } }),
    byMail: await call<{ list_id: string }>('save-list', { name: 'Ana by mail', filter: { search: 'ana@x.test' } }),
    byPhone: await call<{ list_id: string }>('save-list', { name: 'Ben by phone', filter: { search: '+15550103000' } }),
    diazHousing: await call<{ list_id: string }>('save-list', { name: 'Diaz housing', filter: { tags: ['housing'], search: 'diaz' } })
  }

  const people = (on: string, filter: object, seen: string[], seenBy: readonly Role[], unseen?: string[]): Case =>
    ({ fn: 'list-people', on, args: { filter }, pick: names('people'), callers: READERS, seenBy, seen, unseen })
  const hourAgo = new Date(Date.now() - HOUR_MS).toISOString()
  const cases: Case[] = [
    people('tags', { tags: ['housing'] }, ['Ana Diaz', 'Ben Diaz'], READERS),
    people('any_tags', { any_tags: ['parks', 'canvasser'] }, ['Ana Diaz', 'Cy Young'], READERS),
    people('issues', { issues: ['transit'] }, ['Cy Young'], READERS),
    people('cities', { cities: ['shelbyville'] }, ['Cy Young'], READERS),
    people('roles', { roles: ['donor'] }, ['Ana Diaz'], READERS),
    people('active_within_days', { active_within_days: 1 }, ['Ana Diaz'], READERS),
    people('inactive_for_days', { inactive_for_days: 1 }, ['Ben Diaz', 'Cy Young', 'Vera Volunteer', 'Walt Phone'], READERS),
    people('postcode_prefixes', { postcode_prefixes: ['902'] }, ['Ana Diaz', 'Ben Diaz'], STAFF),
    people('consent', { consent: 'sms' }, ['Ben Diaz'], STAFF),
    people('search in the name', { search: 'diaz' }, ['Ana Diaz', 'Ben Diaz'], READERS),
    people('search in the e-mail', { search: 'ana@x.test' }, ['Ana Diaz'], STAFF, []),
    people('search in the phone', { search: '+15550103000' }, ['Ben Diaz'], STAFF, []),
    { fn: 'list-people', on: 'a saved list by postcode', args: { list_id: lists.postcode.list_id }, pick: names('people'), callers: READERS, seenBy: STAFF, seen: ['Ana Diaz', 'Ben Diaz'] },
    { fn: 'list-people', on: 'a saved list by consent', args: { list_id: lists.texters.list_id }, pick: names('people'), callers: READERS, seenBy: STAFF, seen: ['Ben Diaz'] },
    { fn: 'list-people', on: 'a saved list by tags', args: { list_id: lists.housing.list_id }, pick: names('people'), callers: READERS, seenBy: READERS, seen: ['Ana Diaz', 'Ben Diaz'] },
    { fn: 'list-people', on: 'a saved list searching an e-mail', args: { list_id: lists.byMail.list_id }, pick: names('people'), callers: READERS, seenBy: STAFF, seen: ['Ana Diaz'], unseen: [] },
    { fn: 'list-donors', on: 'search in the name', args: { search: 'ana' }, pick: names('donors'), callers: READERS, seenBy: READERS, seen: ['Ana Diaz'] },
    { fn: 'list-donors', on: 'search in the e-mail', args: { search: 'ana@x' }, pick: names('donors'), callers: READERS, seenBy: STAFF, seen: ['Ana Diaz'], unseen: [] },
    { fn: 'list-volunteers', on: 'skill', args: { skill: 'canvassing' }, pick: names('volunteers'), callers: EVERYONE, seenBy: EVERYONE, seen: ['Vera Volunteer'] },
    { fn: 'list-send-log', on: 'person_id', args: { person_id: ana.person_id }, pick: r => (r.items as Array<{ send_id: string }>).map(e => e.send_id), callers: READERS, seenBy: READERS, seen: [sent.send_id] },
    { fn: 'list-send-log', on: 'send_id', args: { send_id: sent.send_id }, pick: r => (r.items as Array<{ person_id: string }>).map(e => e.person_id), callers: READERS, seenBy: READERS, seen: [ana.person_id] },
    { fn: 'list-send-log', on: 'person_id of someone never sent to', args: { person_id: ben.person_id }, pick: r => r.items, callers: READERS, seenBy: READERS, seen: [] },
    { fn: 'call-trends', on: 'from', args: { from: hourAgo }, pick: r => (r.calls as unknown[]).length, callers: READERS, seenBy: READERS, seen: 1 },
    { fn: 'call-trends', on: 'to', args: { to: hourAgo }, pick: r => (r.calls as unknown[]).length, callers: READERS, seenBy: READERS, seen: 0 }
  ]
  for (const { fn, on, args, pick, callers, seenBy, seen, unseen } of cases) {
    for (const role of ROLES) {
      const outcome = call<Record<string, unknown>>(fn, args, cookies[role])
      if (role !== 'admin' && !callers.includes(role)) {
        await t.rejects(outcome, { status: 403, code: 'BERTH_ROLE_TOO_LOW' }, `${role} may not call ${fn}`)
      } else if (role === 'admin' || seenBy.includes(role)) {
        t.same(pick(await outcome), seen, `${fn} by ${on}: ${role} sees the field and gets the right result`)
      } else if (unseen !== undefined) {
        t.same(pick(await outcome), unseen, `${fn} by ${on}: ${role} does not see the field, and the search matches nothing through it`)
      } else {
        const refusal = await outcome.then(() => undefined, (err: unknown) => err)
        t.match(refusal, ServerFunctionError, `${fn} by ${on}: ${role} is refused`)
        t.match(refusal, { status: 403, code: 'BERTH_FORBIDDEN', message: new RegExp(`^${role} may not filter ${fn} by \\w+: it reads the person's \\w+, which ${role} does not see$`) })
      }
    }
  }

  await t.test('the e-mail oracle: a search narrowed to one person rebuilds her address for staff, and finds nothing for readonly', async t => {
    const total = async (search: string, cookie: string): Promise<number> => (await call<{ total: number }>('list-people', { filter: { tags: ['canvasser'], search } }, cookie)).total
    const alphabet = 'abcdefghijklmnopqrstuvwxyz.@'
    const rebuild = async (cookie: string): Promise<string> => {
      let known = '@'
      if (await total(known, cookie) === 0) return ''
      for (const grow of [(c: string) => known + c, (c: string) => c + known]) {
        for (let grown = true; grown;) {
          grown = false
          for (const c of alphabet) {
            if (await total(grow(c), cookie) === 1) { known = grow(c); grown = true; break }
          }
        }
      }
      return known
    }
    t.equal(await rebuild(staff), 'ana@x.test', 'staff, who sees e-mail, may search it')
    t.equal(await rebuild(cookies.readonly), '', 'readonly learns nothing: no search matches through the e-mail')
  })

  await t.test('a phone number finds nobody for readonly; postcodes and consent cannot be enumerated', async t => {
    for (const phone of ['+15550102000', '15550102000', '0102000']) {
      t.equal((await call<{ total: number }>('list-people', { filter: { search: phone } }, cookies.readonly)).total, 0, `readonly searching ${phone}`)
      t.equal((await call<{ total: number }>('list-people', { filter: { search: phone } })).total, 1, `staff searching ${phone}`)
    }
    for (const prefix of ['0', '1', '9', '90', '902', '90210']) {
      await t.rejects(call('list-people', { filter: { postcode_prefixes: [prefix] } }, cookies.readonly), { status: 403, code: 'BERTH_FORBIDDEN' }, `postcode prefix ${prefix}`)
    }
    for (const consent of ['email', 'sms']) {
      await t.rejects(call('list-people', { filter: { consent } }, cookies.readonly), { status: 403, code: 'BERTH_FORBIDDEN' }, `consent ${consent}`)
      await t.rejects(call('list-people', { list_id: lists.housing.list_id, filter: { consent } }, cookies.readonly), { status: 403, code: 'BERTH_FORBIDDEN' }, `consent ${consent} added to a list readonly may use`)
    }
  })

  await t.test('saved lists: readonly is shown those it may run, counted as it runs them; the export runs them so too', async t => {
    const listed = async (cookie: string): Promise<Array<[string, number]>> => (await call<{ lists: Array<{ name: string, count: number }> }>('list-lists', {}, cookie)).lists.map(l => [l.name, l.count])
    t.same(await listed(staff), [['Ana by mail', 1], ['Ben by phone', 1], ['Diaz housing', 2], ['Housing', 2], ['Postcode 902', 2], ['Texters', 1]])
    t.same(await listed(cookies.readonly), [['Ana by mail', 0], ['Ben by phone', 0], ['Diaz housing', 2], ['Housing', 2]], 'no list filtering on a hidden field, no count through one')
    const exported = async (listId: string, cookie: string): Promise<Response> => await fetch(new URL(`/export/people?list_id=${listId}&format=ndjson`, baseUrl), { headers: { cookie } })
    const namesIn = async (response: Response): Promise<string[]> => (await response.text()).trim().split('\n').filter(line => line !== '').map(line => (JSON.parse(line) as Named).name)
    t.same((await namesIn(await exported(lists.postcode.list_id, staff))).sort(), ['Ana Diaz', 'Ben Diaz'])
    for (const list of [lists.postcode, lists.texters]) {
      const refused = await exported(list.list_id, cookies.readonly)
      t.equal(refused.status, 403)
      t.match(await refused.json(), { code: 'BERTH_FORBIDDEN', error: /^readonly may not filter export people by (postcode_prefixes|consent)/ })
    }
    t.same(await namesIn(await exported(lists.byMail.list_id, cookies.readonly)), [], 'a list searching an e-mail exports nobody for readonly')
    t.same((await namesIn(await exported(lists.housing.list_id, cookies.readonly))).sort(), ['Ana Diaz', 'Ben Diaz'])
  })

  await t.test('a saved list\'s filter is shown to each role only as far as it reads fields the role sees', async t => {
    interface Shown { name: string, filter: object, withheld?: string[], created_by?: string }
    const whole = { 'Ana by mail': { search: 'ana@x.test' }, 'Ben by phone': { search: '+15550103000' }, 'Diaz housing': { tags: ['housing'], search: 'diaz' }, Housing: { tags: ['housing'] } }
    for (const role of ROLES) {
      const outcome = call<{ lists: Shown[] }>('list-lists', {}, cookies[role])
      if (role === 'volunteer') {
        await t.rejects(outcome, { status: 403, code: 'BERTH_ROLE_TOO_LOW' }, 'a volunteer may not call list-lists')
        continue
      }
      const lists = Object.fromEntries((await outcome).lists.map(l => [l.name, l]))
      if (role === 'readonly') {
        t.same(Object.keys(lists['Ana by mail']).sort(), ['count', 'created_at', 'filter', 'list_id', 'name', 'updated_at', 'withheld'], 'readonly: no created_by')
        t.same(lists['Ana by mail'].filter, {}, 'readonly: an e-mail search left out')
        t.same(lists['Ana by mail'].withheld, ['search'], 'and named as withheld')
        t.same(lists['Ben by phone'].filter, {}, 'readonly: a phone search left out')
        t.same(lists['Ben by phone'].withheld, ['search'])
        t.match(lists['Diaz housing'], { filter: { tags: ['housing'] }, withheld: ['search'] }, 'readonly: a name search too (the text could be part of an address), the tags kept')
        t.same(lists['Diaz housing'].filter, { tags: ['housing'] })
        t.same(lists.Housing.filter, whole.Housing, 'readonly: a filter on fields it sees, whole')
        t.notOk('withheld' in lists.Housing, 'nothing withheld from it')
        const text = JSON.stringify(lists)
        for (const hidden of ['ana@x.test', 'x.test', '+1555', '0103000', 'created_by', 'staff@']) t.notMatch(text, hidden, `readonly's list-lists holds no "${hidden}"`)
      } else {
        for (const [name, filter] of Object.entries(whole)) {
          t.same(lists[name].filter, filter, `${role}: ${name} with its whole filter`)
          t.notOk('withheld' in lists[name], `${role}: nothing withheld from ${name}`)
        }
        t.equal(lists['Ana by mail'].created_by, 'staff@campaign.test', `${role} sees who made the list`)
      }
    }
  })

  await t.test('the saved search text reaches readonly through no function: only admin\'s audit log holds it', async t => {
    const readonlyReads = [
      await call('list-lists', {}, cookies.readonly),
      await call('list-people', { list_id: lists.byMail.list_id }, cookies.readonly),
      await call('list-people', { list_id: lists.byPhone.list_id }, cookies.readonly),
      await call('list-people', { list_id: lists.diazHousing.list_id }, cookies.readonly),
      await call('person-detail', { person_id: ana.person_id }, cookies.readonly),
      await call('person-detail', { person_id: ben.person_id }, cookies.readonly),
      await call('list-send-log', {}, cookies.readonly),
      await call('list-donors', {}, cookies.readonly),
      await (await fetch(new URL(`/export/people?list_id=${lists.byMail.list_id}&format=ndjson`, baseUrl), { headers: { cookie: cookies.readonly } })).text()
    ]
    const text = JSON.stringify(readonlyReads)
    for (const hidden of ['ana@x.test', '+15550103000', '0103000']) t.notMatch(text, hidden, `no "${hidden}" in what readonly reads`)
    t.match(JSON.stringify(await call('audit-log', { table: 'people-lists' }, cookies.admin)), 'ana@x.test', 'the audit log keeps the list as saved (admin only)')
    await t.rejects(call('audit-log', { table: 'people-lists' }, cookies.readonly), { status: 403, code: 'BERTH_ROLE_TOO_LOW' }, 'readonly may not read it')
  })

  await t.test('list-people says where the caller\'s search looks, per role', async t => {
    for (const role of ROLES) {
      const outcome = call<{ search_in: string[] }>('list-people', {}, cookies[role])
      if (role === 'volunteer') await t.rejects(outcome, { status: 403, code: 'BERTH_ROLE_TOO_LOW' })
      else t.same((await outcome).search_in, role === 'readonly' ? ['name'] : ['name', 'email', 'phone'], role)
    }
  })

  await t.test('person-detail shows readonly no household', async t => {
    const forStaff = await call<{ household: Named[] }>('person-detail', { person_id: ana.person_id })
    t.same(forStaff.household.map(p => p.name), ['Ben Diaz'], 'staff sees who shares the address')
    const forReadonly = await call<Record<string, unknown>>('person-detail', { person_id: ana.person_id }, cookies.readonly)
    t.same(Object.keys(forReadonly).sort(), ['history', 'person'], 'the household is left out, not emptied')
    t.notMatch(JSON.stringify(forReadonly), /Ben|household/, 'no name or id of the household anywhere in it')
  })
})

t.test('shownFilter: each condition only to the roles that see every field it reads, search only to those that see where it looks', async t => {
  const filter = { tags: ['housing'], cities: ['springfield'], postcode_prefixes: ['902'], consent: 'sms' as const, search: 'ana@x.test' }
  const all = ['tags', 'cities', 'postcode_prefixes', 'consent', 'search']
  for (const role of [...ROLES, undefined]) {
    const shown = shownFilter(filter, role)
    if (role === 'admin' || role === 'staff') t.same(shown, { filter, withheld: [] }, `${role}: whole`)
    else if (role === 'readonly') t.same(shown, { filter: { tags: ['housing'], cities: ['springfield'] }, withheld: ['postcode_prefixes', 'consent', 'search'] }, 'readonly: the tags and cities')
    else t.same(shown, { filter: {}, withheld: all }, `${role ?? 'no role'}: nothing`)
  }
  t.same(shownFilter({ tags: ['a'], retired_condition: 'x' } as unknown as Parameters<typeof shownFilter>[0], 'admin'), { filter: { tags: ['a'] }, withheld: ['retired_condition'] }, 'a condition no longer known is withheld, even from admin')
})
