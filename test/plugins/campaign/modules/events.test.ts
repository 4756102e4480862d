// Events and shifts: each function by each role both ways, seats and the waitlist (promotion on a
// cancellation, a lowered capacity keeping who is confirmed), the overlap refusal, 20 concurrent RSVPs
// for 5 places, check-in and no-shows once a shift has ended, reminders sent exactly once (a second run
// and a second book on the same store send none; a failed send is tried again), the slots of a
// shift's time, and match-volunteer for a shift.
import t, { type Test } from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { EventBook, REMINDER_CLAIM_LEASE_MS, type ReminderMessenger } from '../../../../plugins/campaign/modules/events/event-book.js'
import { PeopleDirectory, type Person } from '../../../../plugins/campaign/modules/people/directory.js'
import { slotsOf } from '../../../../plugins/campaign/modules/volunteers/volunteers.js'
import type { LmdbCampaignStore } from '../../../../plugins/campaign/store/lmdb-store.js'
import { campaignApp, lmdbCampaignStore, statusOf } from '../../../support/campaign.js'
import { pollUntil } from '../../../support/poll.js'

const inHours = (h: number): string => new Date(Math.floor(Date.now() / 60_000) * 60_000 + h * 3_600_000).toISOString()
const HALL = { text: 'Eastside community hall, 12 Elm Street', lat: 52.5163, lon: 13.3777 }

interface Shift { shift_id: string, starts_at: string, ends_at: string, capacity: number, confirmed_count: number, free: number, waitlist_count: number, mine: { status: string, position: number | null, checked_in: boolean } | null }
interface EventView { event_id: string, title: string, shifts: Shift[] }
interface Rsvp { person_id: string, status: 'confirmed' | 'waitlisted', position: number | null, shift: Shift }
interface Entry { person_id: string, name: string, email: string, state: string, position: number | null, attended: number, no_shows: number }
interface Roster { counts: Record<string, number>, confirmed: Entry[], waitlist: Entry[] }

t.test('slots of a shift: the wall-clock time of the offset it was written with', async t => {
  t.same(slotsOf({ starts_at: '2030-06-01T10:00:00+02:00', ends_at: '2030-06-01T13:00:00+02:00' }), ['sat-am', 'sat-pm'], 'Saturday 10:00–13:00')
  t.same(slotsOf({ starts_at: '2030-06-04T18:30:00Z', ends_at: '2030-06-04T20:00:00Z' }), ['tue-eve'])
  t.same(slotsOf({ starts_at: '2030-06-01T23:00:00-05:00', ends_at: '2030-06-02T01:00:00-05:00' }), ['sat-eve', 'sun-am'], 'across midnight, in its own offset')
})

t.test('through the API', async t => {
  const { call, login, staff } = await campaignApp(t)
  const volunteer = await login('volunteer')
  const readonly = await login('readonly')

  const canvass = await call<EventView>('save-event', {
    title: 'Saturday canvass, Eastside',
    description: 'Door-knocking on Elm and Oak streets; bring comfortable shoes.',
    location: HALL,
    shifts: [
      { starts_at: inHours(48), ends_at: inHours(51), capacity: 2, skills: ['canvassing'] },
      { starts_at: inHours(50), ends_at: inHours(53), capacity: 5 }
    ]
  })
  const [morning, overlapping] = canvass.shifts

  await t.test('roles: who may do what, both ways', async t => {
    t.equal(canvass.shifts.length, 2)
    t.match(morning, { capacity: 2, confirmed_count: 0, free: 2, waitlist_count: 0, mine: null })
    for (const cookie of [volunteer, readonly]) {
      const { events } = await call<{ events: EventView[] }>('list-events', {}, cookie)
      t.same(events.map(e => e.title), ['Saturday canvass, Eastside'], 'everyone signed in lists upcoming events')
      const detail = await call<EventView & { shifts: Array<Shift & { roster?: unknown }> }>('event-detail', { event_id: canvass.event_id }, cookie)
      t.notOk('roster' in detail.shifts[0], 'no roster for volunteer or readonly')
      t.equal(await statusOf(call('save-event', { title: 'Mine', location: HALL }, cookie)), 403)
      t.equal(await statusOf(call('shift-roster', { shift_id: morning.shift_id }, cookie)), 403)
      t.equal(await statusOf(call('check-in', { shift_id: morning.shift_id, person_id: 'x' }, cookie)), 403)
      t.equal(await statusOf(call('send-shift-reminders', {}, cookie)), 403)
      t.equal(await statusOf(call('person-attendance', { person_id: 'x' }, cookie)), 403)
    }
    t.equal(await statusOf(call('rsvp-shift', { shift_id: morning.shift_id }, readonly)), 403, 'readonly may not RSVP')
    t.equal(await statusOf(call('cancel-rsvp', { shift_id: morning.shift_id }, readonly)), 403)
    await t.rejects(call('rsvp-shift', { shift_id: morning.shift_id, person: { name: 'Someone', email: 'someone@x.test' } }, volunteer),
      new ServerFunctionError(403, 'only staff may act for someone else; leave out person_id and person', 'BERTH_FORBIDDEN'), 'a volunteer signs up only themselves')
    const detail = await call<EventView & { shifts: Array<Shift & { roster?: unknown[] }> }>('event-detail', { event_id: canvass.event_id }, staff)
    t.same(detail.shifts[0].roster, [], 'staff see each shift\'s roster')
    await t.rejects(call('event-detail', { event_id: 'nope' }), new ServerFunctionError(404, 'no event "nope"', 'BERTH_NOT_FOUND'))
    t.equal(await statusOf(call('save-event', { title: 'Backwards', location: HALL, shifts: [{ starts_at: inHours(5), ends_at: inHours(4), capacity: 1 }] })), 400, 'a shift ending before it starts')
    t.equal(await statusOf(call('save-event', { title: 'No time', location: HALL, shifts: [{ starts_at: '2030-06-01', ends_at: '2030-06-02', capacity: 1 }] })), 400, 'a shift needs times with an offset')
    t.equal(await statusOf(call('save-event', { title: 'Empty', location: HALL, shifts: [{ starts_at: inHours(4), ends_at: inHours(5), capacity: 0 }] })), 400, 'capacity at least 1')
  })

  let vera = ''
  await t.test('a volunteer RSVPs herself; seats, the waitlist and promotion', async t => {
    const mine = await call<Rsvp>('rsvp-shift', { shift_id: morning.shift_id }, volunteer)
    t.match(mine, { status: 'confirmed', position: null, shift: { confirmed_count: 1, free: 1 } }, 'confirmed while places are free')
    vera = mine.person_id
    t.match(await call<Rsvp>('rsvp-shift', { shift_id: morning.shift_id }, volunteer), { person_id: vera, status: 'confirmed', shift: { confirmed_count: 1 } }, 'signing up again keeps her one place')
    const ana = await call<Rsvp>('rsvp-shift', { shift_id: morning.shift_id, person: { name: 'Ana Alvarez', email: 'ana@eastside.test' } })
    t.match(ana, { status: 'confirmed', shift: { free: 0 } }, 'staff sign up someone by name and e-mail')
    const ben = await call<Rsvp>('rsvp-shift', { shift_id: morning.shift_id, person: { name: 'Ben Brooks', email: 'ben@eastside.test' } })
    const cy = await call<Rsvp>('rsvp-shift', { shift_id: morning.shift_id, person: { name: 'Cy Chen', email: 'cy@eastside.test' } })
    t.match([ben, cy], [{ status: 'waitlisted', position: 1 }, { status: 'waitlisted', position: 2 }], 'full: the next ones wait, in order')
    const listed = (await call<{ events: EventView[] }>('list-events', {}, volunteer)).events[0].shifts[0]
    t.match(listed, { confirmed_count: 2, free: 0, waitlist_count: 2, mine: { status: 'confirmed', checked_in: false } }, 'counts and her own place')

    t.match(await call('cancel-rsvp', { shift_id: morning.shift_id, person_id: ana.person_id }), { was: 'confirmed', promoted: 1, shift: { confirmed_count: 2, waitlist_count: 1 } }, 'a cancellation promotes the first waiting')
    let roster = await call<Roster>('shift-roster', { shift_id: morning.shift_id })
    t.same(roster.confirmed.map(e => e.name), ['Volunteer User', 'Ben Brooks'])
    t.same(roster.waitlist.map(e => [e.name, e.position]), [['Cy Chen', 1]])

    // Capacity down to 1: both confirmed stay; a newcomer waits. Back up to 3: the waiting are promoted.
    await call('save-event', { event_id: canvass.event_id, title: 'Saturday canvass, Eastside', location: HALL, shifts: [{ shift_id: morning.shift_id, starts_at: morning.starts_at, ends_at: morning.ends_at, capacity: 1, skills: ['canvassing'] }] })
    roster = await call<Roster>('shift-roster', { shift_id: morning.shift_id })
    t.same(roster.confirmed.map(e => e.name), ['Volunteer User', 'Ben Brooks'], 'lowering the capacity drops nobody confirmed')
    t.match(await call('rsvp-shift', { shift_id: morning.shift_id, person: { name: 'Dee Diaz', email: 'dee@eastside.test' } }), { status: 'waitlisted', position: 2, shift: { capacity: 1, free: 0 } })
    await call('save-event', { event_id: canvass.event_id, title: 'Saturday canvass, Eastside', location: HALL, shifts: [{ shift_id: morning.shift_id, starts_at: morning.starts_at, ends_at: morning.ends_at, capacity: 3, skills: ['canvassing'] }] })
    roster = await call<Roster>('shift-roster', { shift_id: morning.shift_id })
    t.same([roster.confirmed.map(e => e.name), roster.waitlist.map(e => e.name)], [['Volunteer User', 'Ben Brooks', 'Cy Chen'], ['Dee Diaz']], 'raising it promotes in order')
    t.equal((await call<EventView>('event-detail', { event_id: canvass.event_id })).shifts.length, 2, 'the shift not listed in the edit is left as it was')
  })

  await t.test('overlapping shifts: a person holds one of them', async t => {
    await t.rejects(call('rsvp-shift', { shift_id: overlapping.shift_id }, volunteer),
      new ServerFunctionError(409, `already confirmed on "Saturday canvass, Eastside" ${shiftText(morning)} (shift_id ${morning.shift_id}), which overlaps this shift`, 'BERTH_SHIFT_OVERLAP'))
    t.match(await call('cancel-rsvp', { shift_id: morning.shift_id }, volunteer), { was: 'confirmed', promoted: 1 }, 'she cancels the first; Dee gets her place')
    t.match(await call('rsvp-shift', { shift_id: overlapping.shift_id }, volunteer), { status: 'confirmed' }, 'and can take the other')
    await t.rejects(call('cancel-rsvp', { shift_id: morning.shift_id }, volunteer), new ServerFunctionError(404, `person ${vera} has no RSVP on shift ${morning.shift_id}`, 'BERTH_NOT_FOUND'))
  })

  await t.test('20 concurrent RSVPs for 5 places: 5 confirmed, 15 waiting, each once', async t => {
    const rally = await call<EventView>('save-event', { title: 'Rally stewards', location: HALL, shifts: [{ starts_at: inHours(72), ends_at: inHours(75), capacity: 5 }] })
    const shiftId = rally.shifts[0].shift_id
    const names = Array.from({ length: 20 }, (_, i) => `Steward ${String(i + 1).padStart(2, '0')}`)
    const results = await Promise.all(names.map(async name => await call<Rsvp>('rsvp-shift', { shift_id: shiftId, person: { name, email: `${name.replace(' ', '.').toLowerCase()}@stewards.test` } })))
    t.equal(results.filter(r => r.status === 'confirmed').length, 5)
    t.same(results.filter(r => r.status === 'waitlisted').map(r => r.position).sort((a, b) => (a ?? 0) - (b ?? 0)), Array.from({ length: 15 }, (_, i) => i + 1), 'positions 1 to 15, none twice')
    const roster = await call<Roster>('shift-roster', { shift_id: shiftId })
    t.same(roster.counts, { confirmed: 5, checked_in: 0, no_show: 0, waitlisted: 15 })
    t.same(new Set([...roster.confirmed, ...roster.waitlist].map(e => e.person_id)).size, 20, 'twenty different people')
    t.same(roster.waitlist.map(e => e.person_id), results.filter(r => r.status === 'waitlisted').sort((a, b) => (a.position ?? 0) - (b.position ?? 0)).map(r => r.person_id), 'the waitlist in the order the places were answered')
  })

  await t.test('check-in, and no-shows once the shift has ended', async t => {
    const evening = await call<EventView>('save-event', { title: 'Phone bank', location: HALL, shifts: [{ starts_at: inHours(2), ends_at: inHours(4), capacity: 3 }] })
    const shiftId = evening.shifts[0].shift_id
    const eli = await call<Rsvp>('rsvp-shift', { shift_id: shiftId, person: { name: 'Eli Evans', email: 'eli@eastside.test' } })
    const fay = await call<Rsvp>('rsvp-shift', { shift_id: shiftId, person: { name: 'Fay Fox', email: 'fay@eastside.test' } })
    const checked = await call<{ person: Entry }>('check-in', { shift_id: shiftId, person_id: eli.person_id })
    t.match(checked.person, { name: 'Eli Evans', state: 'checked_in' })
    t.equal(await statusOf(call('check-in', { shift_id: shiftId, person_id: 'nobody' })), 409, 'only someone confirmed is checked in')
    let roster = await call<Roster>('shift-roster', { shift_id: shiftId })
    t.same(roster.confirmed.map(e => [e.name, e.state]), [['Eli Evans', 'checked_in'], ['Fay Fox', 'confirmed']], 'before the end, not checked in is just confirmed')
    // The shift is moved into the past (it happened earlier than planned): Fay, never checked in, is a no-show.
    await call('save-event', { event_id: evening.event_id, title: 'Phone bank', location: HALL, shifts: [{ shift_id: shiftId, starts_at: inHours(-3), ends_at: inHours(-1), capacity: 3 }] })
    roster = await call<Roster>('shift-roster', { shift_id: shiftId })
    t.same(roster.counts, { confirmed: 0, checked_in: 1, no_show: 1, waitlisted: 0 })
    t.match(roster.confirmed, [{ name: 'Eli Evans', state: 'checked_in', attended: 1, no_shows: 0 }, { name: 'Fay Fox', state: 'no_show', attended: 0, no_shows: 1 }])
    t.same(await call('person-attendance', { person_id: fay.person_id }), { person_id: fay.person_id, name: 'Fay Fox', attended: 0, no_shows: 1, upcoming: 0 })
    t.equal(await statusOf(call('rsvp-shift', { shift_id: shiftId }, volunteer)), 409, 'RSVPs close when the shift starts')
    const { events } = await call<{ events: EventView[] }>('list-events', {})
    t.notOk(events.some(e => e.event_id === evening.event_id), 'an ended event is not upcoming')
    t.ok((await call<{ events: EventView[] }>('list-events', { include_past: true })).events.some(e => e.event_id === evening.event_id), 'include_past lists it')
  })

  await t.test('cancelling an event cancels its shifts', async t => {
    const gone = await call<EventView>('save-event', { title: 'Picnic', location: HALL, shifts: [{ starts_at: inHours(30), ends_at: inHours(32), capacity: 4 }] })
    await call('save-event', { event_id: gone.event_id, title: 'Picnic', location: HALL, cancelled: true })
    t.match((await call<EventView>('event-detail', { event_id: gone.event_id })).shifts, [{ cancelled: true }])
    await t.rejects(call('rsvp-shift', { shift_id: gone.shifts[0].shift_id }, volunteer), new ServerFunctionError(409, `shift ${gone.shifts[0].shift_id} is cancelled`, 'BERTH_SHIFT_CLOSED'))
    t.notOk((await call<{ events: EventView[] }>('list-events', {})).events.some(e => e.event_id === gone.event_id))
  })

  await t.test('match-volunteer with a shift: its slots and skills, and who is busy then', async t => {
    const base = { location: { lat: 52.52, lon: 13.40 } }
    await call('save-volunteer', { ...base, name: 'Volunteer User', email: 'volunteer@campaign.test', skills: ['canvassing'], availability: ['sat-am', 'sat-pm'] })
    await call('save-volunteer', { ...base, name: 'Gia Green', email: 'gia@eastside.test', skills: ['canvassing'], availability: ['sat-am', 'sat-pm'] })
    await call('save-volunteer', { ...base, name: 'Hal Hill', email: 'hal@eastside.test', skills: ['driving'], availability: ['sun-am'] })
    const fixed = await call<EventView>('save-event', { title: 'June canvass', location: HALL, shifts: [{ starts_at: '2030-06-01T10:00:00+02:00', ends_at: '2030-06-01T13:00:00+02:00', capacity: 4, skills: ['canvassing'] }] })
    const shiftId = fixed.shifts[0].shift_id
    // The volunteer user is confirmed on an overlapping shift of another event.
    const other = await call<EventView>('save-event', { title: 'Leaflet run', location: HALL, shifts: [{ starts_at: '2030-06-01T09:00:00+02:00', ends_at: '2030-06-01T11:00:00+02:00', capacity: 2 }] })
    await call('rsvp-shift', { shift_id: other.shifts[0].shift_id }, volunteer)
    const match = await call<{ matches: Array<{ name: string, skills: number, availability: number }>, shift: { slots: string[], skills: string[] }, unavailable: Array<{ volunteer_id: string, name: string, shift_id: string }> }>('match-volunteer', { shift_id: shiftId })
    t.same(match.shift, { shift_id: shiftId, skills: ['canvassing'], slots: ['sat-am', 'sat-pm'] }, 'the shift\'s slots and skills, its event\'s place')
    t.same(match.matches.map(m => [m.name, m.skills, m.availability]), [['Gia Green', 1, 1], ['Hal Hill', 0, 0]])
    t.same(match.unavailable, [{ volunteer_id: match.unavailable[0]?.volunteer_id, name: 'Volunteer User', shift_id: other.shifts[0].shift_id }], 'confirmed elsewhere at that time: left out, listed as unavailable')
    const asked = await call<{ matches: Array<{ name: string, skills: number }> }>('match-volunteer', { shift_id: shiftId, skills: ['driving'] })
    t.equal(asked.matches[0].name, 'Hal Hill', 'skills given win over the shift\'s')
    t.equal(await statusOf(call('match-volunteer', { skills: ['canvassing'] })), 400, 'no place and no shift')
    t.equal(await statusOf(call('match-volunteer', { shift_id: 'nope' }, readonly)), 404)
  })

  await t.test('send-shift-reminders answers staff with what it sent', async t => {
    const run = await call<{ reminder_hours: number, sent: unknown[] }>('send-shift-reminders', {})
    t.equal(run.reminder_hours, 24, 'the default [campaign].shift_reminder_hours')
    t.ok(Array.isArray(run.sent))
  })
})

/** The shift's time as the conflict message writes it (UTC offset). */
function shiftText ({ starts_at: startsAt, ends_at: end }: { starts_at: string, ends_at: string }): string {
  const day = new Date(`${startsAt.slice(0, 10)}T00:00:00Z`).toLocaleDateString('en-US', { weekday: 'short', timeZone: 'UTC' })
  return `${day} ${startsAt.slice(0, 16).replace('T', ' ')}–${end.slice(0, 10) === startsAt.slice(0, 10) ? end.slice(11, 16) : end.slice(0, 16).replace('T', ' ')} UTC`
}

t.test('reminders: once per confirmed person, within the window, restart-safe', async t => {
  const store = lmdbCampaignStore(t)
  const people = new PeopleDirectory(store)
  const sends: Array<{ subject: string, body: string, purpose: string, to: string[] }> = []
  let failing = false
  const messenger: ReminderMessenger = {
    send: async (message, recipients: Person[]) => {
      if (failing) throw new Error('SMTP server unreachable')
      sends.push({ subject: message.subject, body: message.body, purpose: message.purpose, to: recipients.map(p => p.email) })
      return { send_id: `send-${sends.length}`, sent: recipients.length, failed: 0, skipped: [] }
    }
  }
  const book = new EventBook(store, { people, reminderHours: 24, messenger: () => messenger })
  const now = new Date('2030-06-01T08:00:00Z')
  const event = await book.save({
    title: 'Saturday canvass',
    description: 'Meet at the hall.',
    location: HALL,
    shifts: [
      { starts_at: '2030-06-01T20:00:00Z', ends_at: '2030-06-01T22:00:00Z', capacity: 2, skills: [] },
      { starts_at: '2030-06-03T10:00:00Z', ends_at: '2030-06-03T12:00:00Z', capacity: 2, skills: [] }
    ]
  }, 'staff@campaign.test', now)
  const [soon, later] = await book.shiftsOf(event.event_id)
  const ana = await people.ensure({ name: 'Ana Alvarez', email: 'ana@eastside.test' }, 'volunteer', 'test')
  const ben = await people.ensure({ name: 'Ben Brooks', email: 'ben@eastside.test' }, 'volunteer', 'test')
  const cy = await people.ensure({ name: 'Cy Chen', email: 'cy@eastside.test' }, 'volunteer', 'test')
  await book.rsvp(soon.shift_id, ana.person_id, 'test', now)
  await book.rsvp(soon.shift_id, ben.person_id, 'test', now)
  await book.rsvp(soon.shift_id, cy.person_id, 'test', now)
  await book.rsvp(later.shift_id, cy.person_id, 'test', now)

  failing = true
  const failed = await book.sendDueReminders(now)
  t.match(failed, [{ shift_id: soon.shift_id, error: 'SMTP server unreachable' }], 'a send that fails is reported')
  failing = false

  const first = await book.sendDueReminders(now)
  t.match(first, [{ shift_id: soon.shift_id, title: 'Saturday canvass', person_ids: [ana.person_id, ben.person_id], send_id: 'send-1', sent: 2 }], 'the confirmed on the shift within 24 hours, the failed ones tried again; not the waitlist, not the later shift')
  t.same(sends.map(s => [s.purpose, s.to]), [['shift-reminder', ['ana@eastside.test', 'ben@eastside.test']]])
  t.match(sends[0], { subject: 'Reminder: Saturday canvass, Sat 2030-06-01 20:00–22:00 UTC', body: /^Hello \{\{first_name\}\},\n\nYou are signed up for Saturday canvass\.\nWhen: Sat 2030-06-01 20:00–22:00 UTC\nWhere: Eastside community hall/ })
  t.same(await book.sendDueReminders(new Date('2030-06-01T09:00:00Z')), [], 'a second run sends none')
  const restarted = new EventBook(store, { people, reminderHours: 24, messenger: () => messenger })
  t.same(await restarted.sendDueReminders(new Date('2030-06-01T10:00:00Z')), [], 'nor does a new book on the same store (a restart)')

  // Someone promoted later gets theirs on the next run; a run after downtime sends what is due before the start.
  await book.cancel(soon.shift_id, ana.person_id, new Date('2030-06-01T11:00:00Z'))
  t.match(await restarted.sendDueReminders(new Date('2030-06-01T12:00:00Z')), [{ shift_id: soon.shift_id, person_ids: [cy.person_id] }], 'the promoted person gets one')
  t.match(await restarted.sendDueReminders(new Date('2030-06-02T18:00:00Z')), [{ shift_id: later.shift_id, person_ids: [cy.person_id] }], 'the later shift, once within the window (its window opened during downtime)')
  t.same(await restarted.sendDueReminders(new Date('2030-06-03T10:30:00Z')), [], 'nothing for a shift that has started')
  t.equal(sends.length, 3, 'three sends in all')
  const roster = await book.roster(soon.shift_id, new Date('2030-06-01T12:00:00Z'))
  t.same(roster.entries.map(e => [e.name, e.reminded_at !== null]), [['Ben Brooks', true], ['Cy Chen', true]], 'the roster shows who was reminded')
  t.same(await new EventBook(store, { people, reminderHours: 24 }).sendDueReminders(now), [], 'without a messenger nothing is claimed or sent')
})

/** An event book on a fresh LMDB store, with three volunteers and an event of the given shifts. */
async function bookWithShifts (t: Test, shifts: Array<{ starts_at: string, ends_at: string, capacity: number }>, messenger?: ReminderMessenger): Promise<{ store: LmdbCampaignStore, people: PeopleDirectory, book: EventBook, shifts: Array<{ shift_id: string }>, ana: Person, ben: Person }> {
  const store = lmdbCampaignStore(t)
  const people = new PeopleDirectory(store)
  const book = new EventBook(store, { people, reminderHours: 24, ...(messenger === undefined ? {} : { messenger: () => messenger }) })
  const event = await book.save({ title: 'Phone bank', description: '', location: HALL, shifts: shifts.map(s => ({ ...s, skills: [] })) }, 'staff@campaign.test', NOW)
  const ana = await people.ensure({ name: 'Ana Alvarez', email: 'ana@eastside.test' }, 'volunteer', 'test')
  const ben = await people.ensure({ name: 'Ben Brooks', email: 'ben@eastside.test' }, 'volunteer', 'test')
  return { store, people, book, shifts: await book.shiftsOf(event.event_id), ana, ben }
}
const NOW = new Date('2030-06-01T08:00:00Z')

t.test('a reminder run killed while sending: its claim is taken again after the lease, not before', async t => {
  const { people, store, book, shifts: [shift], ana } = await bookWithShifts(t, [{ starts_at: '2030-06-01T20:00:00Z', ends_at: '2030-06-01T22:00:00Z', capacity: 2 }])
  await book.rsvp(shift.shift_id, ana.person_id, 'test', NOW)
  // The fault: the run claims the seat, then its process dies before the message is marked sent (its send never answers).
  const dying = new EventBook(store, { people, reminderHours: 24, messenger: () => ({ send: async () => await new Promise<never>(() => {}) }) })
  void dying.sendDueReminders(NOW)
  await pollUntil(async () => (await book.shift(shift.shift_id)).confirmed[0].reminder?.state === 'sending', { what: 'the dying run\'s claim' })
  const sent: string[][] = []
  const restarted = new EventBook(store, { people, reminderHours: 24, messenger: () => ({ send: async (_message, recipients: Person[]) => { sent.push(recipients.map(p => p.email)); return { send_id: 'send-1', sent: recipients.length, failed: 0, skipped: [] } } }) })
  t.same(await restarted.sendDueReminders(new Date(NOW.getTime() + REMINDER_CLAIM_LEASE_MS - 60_000)), [], 'within the lease the claim holds (that run may still be sending)')
  t.match(await restarted.sendDueReminders(new Date(NOW.getTime() + REMINDER_CLAIM_LEASE_MS)), [{ shift_id: shift.shift_id, person_ids: [ana.person_id], sent: 1 }], 'after it, the seat is claimed again and the reminder sent')
  t.same(sent, [['ana@eastside.test']])
  t.same(await restarted.sendDueReminders(new Date(NOW.getTime() + 2 * REMINDER_CLAIM_LEASE_MS)), [], 'once')
  t.match((await book.roster(shift.shift_id, NOW)).entries, [{ name: 'Ana Alvarez', reminded_at: (new Date(NOW.getTime() + REMINDER_CLAIM_LEASE_MS)).toISOString() }])
})

t.test('one person at once on two overlapping shifts: an RSVP, or a promotion, and an RSVP: one seat', async t => {
  const { book, shifts: [morning, noon], ana, ben } = await bookWithShifts(t, [
    { starts_at: '2030-06-02T10:00:00Z', ends_at: '2030-06-02T12:00:00Z', capacity: 1 },
    { starts_at: '2030-06-02T11:00:00Z', ends_at: '2030-06-02T13:00:00Z', capacity: 5 }
  ])
  const confirmedOn = async (personId: string): Promise<string[]> => (await Promise.all([morning, noon].map(async s => await book.shift(s.shift_id)))).filter(s => s.confirmed.some(seat => seat.person_id === personId)).map(s => s.shift_id)
  const both = await Promise.allSettled([book.rsvp(morning.shift_id, ana.person_id, 'test', NOW), book.rsvp(noon.shift_id, ana.person_id, 'test', NOW)])
  t.same(both.map(r => r.status).sort(), ['fulfilled', 'rejected'], 'two RSVPs at the same instant: one is taken')
  t.match(both.find(r => r.status === 'rejected'), { reason: { code: 'BERTH_SHIFT_OVERLAP' } })
  t.equal((await confirmedOn(ana.person_id)).length, 1, 'she holds one seat')

  // Ben waits for the full morning shift; its holder cancels (promoting him) while he RSVPs at noon.
  const [held] = await confirmedOn(ana.person_id)
  await book.cancel(held, ana.person_id, NOW)
  await book.rsvp(morning.shift_id, ana.person_id, 'test', NOW)
  t.match(await book.rsvp(morning.shift_id, ben.person_id, 'test', NOW), { status: { status: 'waitlisted' } })
  await Promise.allSettled([book.cancel(morning.shift_id, ana.person_id, NOW), book.rsvp(noon.shift_id, ben.person_id, 'test', NOW)])
  t.equal((await confirmedOn(ben.person_id)).length, 1, 'promoted or signed up: he holds one seat of the two')
})
