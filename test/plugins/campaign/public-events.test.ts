// The public event pages: the form tokens (altered, for another event, too early, expired, replayed,
// swept), the calendar file's escaping and folding, the rate limit, then through a running app with a
// real SMTP server on loopback: who may publish (staff, not volunteer or readonly), an unpublished
// event not shown, the page's own policy and labels, an RSVP matched by e-mail without touching the
// person's record, the waitlist, the honeypot, the field and size limits, a replayed or altered form,
// and the confirmation e-mail: its calendar file parsed with ical.js and its cancel link followed (GET
// changes nothing, POST cancels and promotes the first waiting, who is e-mailed that they have a place,
// again says already cancelled, altered answers 400). A second app with the default window and limit refuses a form sent at once (the same
// form is taken once two seconds passed) and the 11th post in a minute.
import ICAL from 'ical.js'
import type { ParsedMail } from 'mailparser'
import t from 'tap'
import { calendar, fold, icsText } from '../../../plugins/campaign/modules/events/ics.js'
import { PublicTokens } from '../../../plugins/campaign/modules/events/public-tokens.js'
import { RateLimit } from '../../../plugins/campaign/modules/events/rate-limit.js'
import { campaignApp, lmdbCampaignStore, statusOf } from '../../support/campaign.js'
import { pollUntil } from '../../support/poll.js'
import { form, inputValue } from '../../support/public-pages.js'
import { mailServer } from '../../support/smtp.js'

const inHours = (h: number): string => new Date(Math.floor(Date.now() / 60_000) * 60_000 + h * 3_600_000).toISOString()
const HALL = { text: 'Eastside hall; room 2, 12 Elm Street', lat: 52.5163, lon: 13.3777 }

interface EventView { event_id: string, title: string, shifts: Array<{ shift_id: string }> }
interface Published { event_id: string, published: boolean, slug: string, path: string }
interface Roster { confirmed: Array<{ name: string, email: string, added_by: string }>, waitlist: Array<{ name: string }> }

t.test('form and cancel tokens', async t => {
  const store = lmdbCampaignStore(t)
  let now = 1_800_000_000_000
  const tokens = new PublicTokens(store, { minMs: 2000, maxMs: 2 * 3_600_000 }, () => now)
  const token = await tokens.formToken('ev-1')
  const [payload, signature] = token.split('.')
  const altered = `${Buffer.from(Buffer.from(payload, 'base64url').toString().replace('ev-1', 'ev-2')).toString('base64url')}.${signature}`
  t.same(await tokens.useFormToken(altered, 'ev-2'), { ok: false, reason: 'invalid' }, 'an altered payload')
  t.same(await tokens.useFormToken(`${payload}.${signature.slice(0, -2)}AA`, 'ev-1'), { ok: false, reason: 'invalid' }, 'an altered signature')
  t.same(await tokens.useFormToken(token, 'ev-2'), { ok: false, reason: 'invalid' }, 'another event\'s form')
  now += 1500
  t.same(await tokens.useFormToken(token, 'ev-1'), { ok: false, reason: 'early' }, 'sent 1.5 s after the page')
  now += 600
  t.same(await tokens.useFormToken(token, 'ev-1'), { ok: true }, 'the same form 2.1 s after: not used up by the early try')
  t.same(await tokens.useFormToken(token, 'ev-1'), { ok: false, reason: 'used' }, 'replayed')
  const late = await tokens.formToken('ev-1')
  now += 2 * 3_600_000 + 1
  t.same(await tokens.useFormToken(late, 'ev-1'), { ok: false, reason: 'expired' }, 'after two hours')
  t.equal(await tokens.sweep(), 1, 'the used token is forgotten once it would be expired anyway')
  t.same(await tokens.useFormToken(token, 'ev-1'), { ok: false, reason: 'expired' }, 'and a replay of it is still refused')

  const cancel = await tokens.cancelToken('rsvp-42')
  t.equal(await tokens.readCancelToken(cancel), 'rsvp-42')
  // The signature's first character is altered: its last carries 2 bits that base64url decoding drops.
  const [cancelPayload, cancelSignature] = cancel.split('.')
  t.equal(await tokens.readCancelToken(`${cancelPayload}.${cancelSignature.startsWith('A') ? 'B' : 'A'}${cancelSignature.slice(1)}`), undefined, 'an altered cancel link')
  t.same(await tokens.useFormToken(cancel, 'ev-1'), { ok: false, reason: 'invalid' }, 'a cancel token is no form token')
  t.equal(await tokens.readCancelToken(await tokens.formToken('ev-1')), undefined, 'nor a form token a cancel token')
  const again = new PublicTokens(store, { minMs: 0, maxMs: 1000 }, () => now)
  t.equal(await again.readCancelToken(cancel), 'rsvp-42', 'the key is kept in the store: another instance reads the link')
})

t.test('the calendar file: escaping, folding, parsed by ical.js', async t => {
  t.equal(icsText('a\\b;c,d\ne'), 'a\\\\b\\;c\\,d\\ne')
  const long = `DESCRIPTION:${'ü'.repeat(100)}`
  const folded = fold(long)
  for (const line of folded.split('\r\n')) t.ok(Buffer.byteLength(line) <= 75, `a line of ${Buffer.byteLength(line)} octets`)
  t.equal(folded.split('\r\n').map((line, i) => i === 0 ? line : line.slice(1)).join(''), long, 'unfolds to the line, no character split')
  const text = calendar([{ uid: 'r-s@x.test', starts_at: '2030-06-01T10:00:00+02:00', ends_at: '2030-06-01T13:00:00+02:00', summary: 'Canvass, Eastside; bring shoes', description: `Line one\nLine two ${'long '.repeat(30)}`, location: HALL.text, geo: HALL, confirmed: false }], new Date('2030-05-01T00:00:00Z'))
  t.ok(text.split('\r\n').every(line => Buffer.byteLength(line) <= 75), 'every line within 75 octets')
  const event = new ICAL.Event(new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent') as ICAL.Component)
  t.equal(event.summary, 'Canvass, Eastside; bring shoes')
  t.equal(event.location, HALL.text)
  t.equal(event.description, `Line one\nLine two ${'long '.repeat(30)}`)
  t.equal(event.startDate.toJSDate().toISOString(), '2030-06-01T08:00:00.000Z')
  t.equal(event.component.getFirstPropertyValue('status'), 'TENTATIVE')
})

t.test('the rate limit: a sliding minute per address', async t => {
  let now = 0
  const limit = new RateLimit(3, 2, () => now)
  t.same([limit.take('a'), limit.take('a'), limit.take('a')], [0, 0, 0])
  t.equal(limit.take('a'), 60, 'the 4th in the minute waits a minute')
  t.equal(limit.take('b'), 0, 'another address has its own')
  now += 30_000
  t.equal(limit.take('a'), 30)
  now += 30_001
  t.equal(limit.take('a'), 0, 'the minute has passed')
  limit.take('c')
  limit.take('c')
  limit.take('c')
  t.equal(limit.take('a'), 0, 'with two addresses followed, the one seen longest ago (b) was forgotten, not a')
})

t.test('through the app', async t => {
  const mail = await mailServer(t)
  const { call, login, baseUrl } = await campaignApp(t, { smtp_url: `smtp://127.0.0.1:${mail.port}`, mail_from: 'Lopez for Council <hello@lopez.test>', public_form_min_seconds: 0, public_rsvp_per_minute: 1000 })
  const volunteer = await login('volunteer')
  const readonly = await login('readonly')
  const event = await call<EventView>('save-event', {
    title: 'Saturday canvass, Eastside',
    description: 'Door-knocking on Elm and Oak streets.\n\nBring comfortable shoes.',
    location: HALL,
    shifts: [{ starts_at: inHours(48), ends_at: inHours(51), capacity: 1 }, { starts_at: inHours(72), ends_at: inHours(75), capacity: 5 }]
  })
  const [small, big] = event.shifts.map(s => s.shift_id)
  const get = async (path: string): Promise<Response> => await fetch(new URL(path, baseUrl))
  const post = async (path: string, body: string, type = 'application/x-www-form-urlencoded'): Promise<Response> =>
    await fetch(new URL(path, baseUrl), { method: 'POST', headers: { 'content-type': type }, body })

  let page = ''
  await t.test('publishing: staff only; an unpublished event is not shown', async t => {
    t.equal((await get(`/e/${event.event_id}`)).status, 404, 'not published yet')
    for (const cookie of [volunteer, readonly]) t.equal(await statusOf(call('publish-event', { event_id: event.event_id, published: true }, cookie)), 403)
    t.equal((await get(`/e/${event.event_id}`)).status, 404, 'still not shown')
    const published = await call<Published>('publish-event', { event_id: event.event_id, published: true })
    t.match(published, { published: true, slug: /^saturday-canvass-eastside-[0-9a-f]{6}$/, path: `/e/${published.slug}` })
    t.match(await call('event-detail', { event_id: event.event_id }, volunteer), { published: true, slug: published.slug }, 'the flag shows in the staff views')
    const response = await get(published.path)
    t.equal(response.status, 200)
    t.equal(response.headers.get('set-cookie'), null, 'no session, no cookie')
    t.equal(response.headers.get('content-security-policy'), response.headers.get('content-security-policy')?.match(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/)?.[0], 'the page\'s own strict policy')
    page = await response.text()
    t.notMatch(page, /<script/i, 'no script')
    t.ok(page.length < 8000, `a small page (${page.length} bytes)`)
    t.match(page, /1 of 1 place left[\s\S]*5 of 5 places left/)
    for (const id of ['f-name', 'f-email', 'f-phone', 'f-website', 's-0', 's-1']) t.match(page, new RegExp(`<label for="${id}"`), `a label for ${id}`)
    t.equal((await get(`/e/${event.event_id}`)).status, 200, 'by id as well')
    await call('publish-event', { event_id: event.event_id, published: false })
    t.equal((await get(published.path)).status, 404, 'unpublished again: gone')
    await call('publish-event', { event_id: event.event_id, published: true })
    t.equal((await get('/e/no-such-event')).status, 404)
  })
  const path = `/e/${event.event_id}`
  const fresh = async (): Promise<string> => inputValue(await (await get(path)).text(), 'token')

  let ana = ''
  await t.test('an RSVP: a new person, confirmed, in the roster and in their history', async t => {
    const token = inputValue(page, 'token')
    const response = await post(path, form({ name: 'Ana Alvarez', email: 'Ana@Example.test', phone: '+1 415 555 0101', shift: small, website: '', token }))
    t.equal(response.status, 200)
    const html = await response.text()
    t.match(html, /Thank you: you are signed up[\s\S]*data-outcome="confirmed"[\s\S]*you have a place/)
    const roster = await call<Roster>('shift-roster', { shift_id: small })
    t.match(roster.confirmed, [{ name: 'Ana Alvarez', email: 'ana@example.test', added_by: 'public event page' }])
    const { people } = await call<{ people: Array<{ person_id: string, phone: string }> }>('list-people', { filter: { search: 'ana@example.test' } })
    ana = people[0].person_id
    t.equal(people[0].phone, '+14155550101', 'a new person gets the phone given')
    const detail = await call<{ history: Array<{ by: string, function: string }> }>('person-detail', { person_id: ana })
    t.ok(detail.history.some(entry => entry.by === 'public event page' && entry.function === 'public-rsvp'), 'the RSVP in the person\'s history')

    const replay = await post(path, form({ name: 'Ana Alvarez', email: 'ana@example.test', shift: small, website: '', token }))
    t.equal(replay.status, 400, 'the same form again')
    t.match(await replay.text(), /This form was sent already/)
    const [payload, signature] = (await fresh()).split('.')
    const altered = await post(path, form({ name: 'Ana', email: 'ana@example.test', shift: small, website: '', token: `${payload}.${signature.slice(1)}x` }))
    t.equal(altered.status, 400)
    t.match(await altered.text(), /This form was not recognised/)
  })

  await t.test('an existing person\'s e-mail: nothing of theirs changes, nothing tells the visitor', async t => {
    await call('save-person', { name: 'Ben Brooks', email: 'ben@example.test', phone: '+1 415 555 0102' })
    const response = await post(path, form({ name: 'Somebody Else', email: 'BEN@example.test', phone: '+1 415 555 0199', shift: small, website: '', token: await fresh() }))
    t.equal(response.status, 200)
    const html = await response.text()
    t.match(html, /You are on the waitlist[\s\S]*data-outcome="waitlisted"[\s\S]*number 1 on its waitlist/, 'the full shift: on its waitlist, said on the page')
    t.notMatch(html, /Ben|Brooks|already/, 'the page names no one and says nothing of the address')
    const { people } = await call<{ people: Array<{ name: string, phone: string }> }>('list-people', { filter: { search: 'ben@example.test' } })
    t.match(people, [{ name: 'Ben Brooks', phone: '+14155550102' }], 'his name and phone are as they were')
    const newcomer = await post(path, form({ name: 'Cy Chen', email: 'cy@example.test', shift: small, website: '', token: await fresh() }))
    t.equal((await newcomer.text()).replace(/Cy Chen|number 2/g, '').length, html.replace(/number 1/g, '').length, 'a new address gets the same page')
  })

  await t.test('the honeypot: answered like a success, nothing kept or sent', async t => {
    const mails = mail.received.length
    const response = await post(path, form({ name: 'Bot', email: 'bot@spam.test', shift: big, website: 'http://spam.test', token: await fresh() }))
    t.equal(response.status, 200)
    t.match(await response.text(), /Thank you: you are signed up/)
    t.same((await call<{ people: unknown[] }>('list-people', { filter: { search: 'bot@spam.test' } })).people, [], 'no person')
    t.same((await call<Roster>('shift-roster', { shift_id: big })).confirmed, [], 'no seat')
    await pollUntil(() => mail.received.length >= 3, { what: 'the three confirmations of the real RSVPs' })
    t.equal(mail.received.filter(m => m.to !== undefined && JSON.stringify(m.to).includes('bot@spam.test')).length, 0, 'no mail to the bot')
    t.equal(mail.received.length, mails >= 3 ? mails : 3)
  })

  await t.test('field and size limits: 400 with the form and its messages', async t => {
    const refused = async (fields: Record<string, string | string[]>, message: RegExp, what: string): Promise<void> => {
      const response = await post(path, form({ website: '', token: await fresh(), ...fields }))
      t.equal(response.status, 400, what)
      const html = await response.text()
      t.match(html, message, what)
      t.match(html, /role="alert"/, `${what}: the messages are announced`)
    }
    await refused({ name: 'x'.repeat(201), email: 'd@example.test', shift: big }, /at most 200 characters/, 'a long name')
    await refused({ name: 'Dee', email: 'not-an-address', shift: big }, /Enter an e-mail address like/, 'a bad e-mail')
    await refused({ name: 'Dee', email: 'd@example.test' }, /Choose at least one shift/, 'no shift')
    await refused({ name: 'Dee', email: 'd@example.test', shift: 'not-a-shift' }, /Choose shifts listed on this page/, 'a shift not on the page')
    await refused({ name: 'Dee', email: 'd@example.test', phone: '12', shift: big }, /Enter a phone number/, 'a bad phone')
    await refused({ name: ['Dee', 'Dee'], email: 'd@example.test', shift: big }, /Enter your name/, 'a field twice')
    const large = await post(path, form({ name: 'Dee', email: 'd@example.test', shift: big, website: 'x'.repeat(9000), token: await fresh() }))
    t.equal(large.status, 400, 'over 8 KB')
    t.match(await large.text(), /The form sent was larger than 8 KB/)
    const json = await post(path, JSON.stringify({ name: 'Dee' }), 'application/json')
    t.equal(json.status, 400, 'not a form')
    t.match(await json.text(), /Please send the form from the page it is on/)
    const broken = await post(path, '{"name": ', 'application/json')
    t.equal(broken.status, 400, 'a body its parser refuses')
    t.match(await broken.text(), /Please send the form from the page it is on/)
    const other = await post(path, 'name=Dee', 'text/plain')
    t.equal(other.status, 400, 'another media type')
    t.match(await other.text(), /Please send the form from the page it is on/)
    t.same((await call<{ people: unknown[] }>('list-people', { filter: { search: 'd@example.test' } })).people, [], 'none of them stored anyone')
  })

  await t.test('the confirmation e-mail: its calendar file and its cancel link', async t => {
    const toAna = await pollUntil(() => mail.received.find((m: ParsedMail) => JSON.stringify(m.to).includes('ana@example.test')), { what: 'Ana\'s confirmation' })
    t.equal(toAna.subject, 'Your RSVP: Saturday canvass, Eastside')
    t.match(toAna.text, /Hello Ana,[\s\S]*: you have a place/)
    const ics = toAna.attachments.find(a => a.filename === 'event.ics')
    t.ok(ics, 'a calendar file attached')
    t.match(ics?.contentType, 'text/calendar')
    const vevent = new ICAL.Component(ICAL.parse(ics?.content.toString('utf8') ?? '')).getFirstSubcomponent('vevent') as ICAL.Component
    const entry = new ICAL.Event(vevent)
    t.equal(entry.summary, 'Saturday canvass, Eastside')
    t.equal(entry.location, HALL.text, 'the semicolon and commas escaped and read back')
    t.equal(entry.startDate.toJSDate().toISOString(), new Date(inHours(48)).toISOString())
    t.equal(vevent.getFirstPropertyValue('status'), 'CONFIRMED')

    const link = /(http:\/\/\S+\/rsvp\/cancel\?t=\S+)/.exec(toAna.text ?? '')?.[1] ?? ''
    t.ok(link.startsWith(new URL('/rsvp/cancel?t=', baseUrl).href), 'the link leads to this app')
    const view = await fetch(link)
    t.equal(view.status, 200)
    t.match(await view.text(), /Cancel your RSVP[\s\S]*Saturday canvass, Eastside[\s\S]*<form method="post"/)
    t.match(await call<Roster>('shift-roster', { shift_id: small }), { confirmed: [{ name: 'Ana Alvarez' }] }, 'a GET (a mail scanner) cancels nothing')
    const token = new URL(link).searchParams.get('t') ?? ''
    const tampered = await post(`/rsvp/cancel?t=${encodeURIComponent(token.slice(0, -3) + 'abc')}`, '')
    t.equal(tampered.status, 400)
    t.match(await tampered.text(), /Cancel link not valid/)
    t.equal((await get(`/rsvp/cancel?t=${encodeURIComponent(inputValue(page, 'token'))}`)).status, 400, 'a form token is not a cancel link')
    const cancelled = await fetch(link, { method: 'POST' })
    t.equal(cancelled.status, 200)
    t.match(await cancelled.text(), /RSVP cancelled/)
    const roster = await call<Roster>('shift-roster', { shift_id: small })
    t.match(roster, { confirmed: [{ email: 'ben@example.test' }], waitlist: [{ name: 'Cy Chen' }] }, 'the freed place went to the first waiting')
    const toBen = await pollUntil(() => mail.received.find((m: ParsedMail) => m.subject === 'You have a place: Saturday canvass, Eastside'), { what: 'the e-mail to the person moved up' })
    t.match(JSON.stringify(toBen.to), 'ben@example.test', 'to Ben, moved up from the waitlist')
    t.match(toBen.text, /Hello Ben,[\s\S]*now have a place/)
    t.notOk(mail.received.some(m => m.subject?.startsWith('You have a place') === true && JSON.stringify(m.to).includes('cy@example.test')), 'not to Cy, still waiting')
    const again = await fetch(link, { method: 'POST' })
    t.equal(again.status, 200)
    t.match(await again.text(), /Already cancelled/)
    t.match(await (await fetch(link)).text(), /Already cancelled/)
  })
})

t.test('the default window and rate limit', async t => {
  const { call, baseUrl } = await campaignApp(t)
  const event = await call<EventView>('save-event', { title: 'Phone bank', location: HALL, shifts: [{ starts_at: inHours(30), ends_at: inHours(32), capacity: 50 }] })
  const { path } = await call<Published>('publish-event', { event_id: event.event_id, published: true })
  const token = inputValue(await (await fetch(new URL(path, baseUrl))).text(), 'token')
  let posts = 0
  const send = async (fields: Record<string, string>): Promise<Response> => {
    posts++
    return await fetch(new URL(path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ shift: event.shifts[0].shift_id, website: '', ...fields }) })
  }
  const fields = { name: 'Eve Martin', email: 'eve@example.test', token }
  const first = await send(fields)
  t.equal(first.status, 400, 'sent at once after the page')
  t.match(await first.text(), /sent too quickly/)
  const taken = await pollUntil(async () => { const response = await send(fields); return response.status === 200 && response }, { interval: 700, timeout: 5000, what: 'the same form taken after 2 s' })
  t.match(await taken.text(), /you have a place/)
  t.ok(posts <= 10, `${posts} posts so far`)
  while (posts < 10) t.equal((await send(fields)).status, 400, 'a replay, still counted')
  const limited = await send(fields)
  t.equal(limited.status, 429, 'the 11th post in a minute')
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'with Retry-After')
  t.match(await limited.text(), /Too many forms were sent from your network/)
})
