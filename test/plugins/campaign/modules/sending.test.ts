// Sending: e-mail through a real SMTP server (smtp-server, each message parsed with mailparser) and SMS
// through a stand-in SMS provider on loopback. Merge fields per recipient, consent and do-not-contact,
// the unsubscribe link posted over HTTP and the suppression list honoured afterwards, a recipient the
// server refuses, the server gone, sending off, the send log per role, and the roles that may send.
import type { ParsedMail } from 'mailparser'
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { checkMergeFields, merge, suppressionKey } from '../../../../plugins/campaign/modules/sending/messenger.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { mailServer } from '../../../support/smtp.js'
import { smsProvider } from '../../../support/sms-provider.js'

interface Summary { send_id: string, sent: number, failed: number, skipped: Array<{ person_id: string, reason: string }> }
interface LogEntry { send_id: string, channel: string, person_id: string, address?: string, purpose: string, status: string, response?: string, message_id: string, at: string, sent_by?: string }
interface Saved { person_id: string, name: string }

const header = (mail: ParsedMail, name: string): string | undefined => mail.headerLines.find(line => line.key === name)?.line.replace(/^[^:]+:\s*/, '')

t.test('merge fields and suppression keys', async t => {
  t.equal(merge('Hi {{first_name}} ({{ name }}), {{email}}', { name: 'Ana María Alvarez', first_name: 'Ana', email: 'ana@x.test', unsubscribe_url: 'u' }), 'Hi Ana (Ana María Alvarez), ana@x.test')
  t.throws(() => { checkMergeFields('body', 'Dear {{name}}, your {{favourite_colour}}') }, { statusCode: 400, message: 'invalid arguments: /body: unknown merge field {{favourite_colour}}; the fields are {{name}}, {{first_name}}, {{email}}, {{unsubscribe_url}}' })
  t.same(suppressionKey(' Ana@Example.TEST '), { key: 'ana@example.test', channel: 'email' })
  t.same(suppressionKey('+44 20 7946 0958'), { key: '+442079460958', channel: 'sms' })
  t.throws(() => { suppressionKey('not an address') }, { statusCode: 400, message: 'invalid arguments: /address: "not an address" is not an e-mail address or phone number' })
})

t.test('e-mail and SMS through real servers', async t => {
  const mail = await mailServer(t)
  const SMS_TOKEN = 'stand-in-provider-token-7f3a'
  const sms = await smsProvider(t, SMS_TOKEN)
  const { call, login, baseUrl } = await campaignApp(t, {
    smtp_url: `smtp://127.0.0.1:${mail.port}`,
    mail_from: 'Lopez for Council <hello@lopez.test>',
    sms_url: sms.url,
    sms_token: SMS_TOKEN
  })
  const save = async (fields: object): Promise<Saved> => await call<Saved>('save-person', fields)
  const ana = await save({ name: 'Ana María Alvarez', email: 'ana.alvarez@example.test', phone: '+1 415 555 0101', consent: { email: true, sms: true } })
  const ben = await save({ name: 'Ben Okafor', email: 'ben.okafor@example.test', consent: { email: true } })
  const cara = await save({ name: 'Cara Nguyen', email: 'cara.nguyen@example.test', consent: { email: false, sms: true } })
  const dan = await save({ name: 'Dan Kowalski', email: 'dan.k@example.test', phone: '+1 415 555 0104', consent: { email: true, sms: true, do_not_contact: true } })
  const eve = await save({ name: 'Eve Martin', phone: '+1 415 555 0105', consent: { email: true, sms: true } })
  const everyone = [ana, ben, cara, dan, eve].map(p => p.person_id)
  const log = async (sendId: string, cookie?: string): Promise<LogEntry[]> => (await call<{ items: LogEntry[] }>('list-send-log', { send_id: sendId, limit: 200 }, cookie)).items

  let anaUnsubscribe = ''
  await t.test('merge fields per recipient; only people with consent receive it', async t => {
    const summary = await call<Summary>('send-email', {
      person_ids: everyone,
      subject: 'Saturday canvass, {{first_name}}',
      body: 'Dear {{name}},\n\nWe are knocking doors on Saturday at 10:00 from the library.\nThis went to {{email}}.\n\nStop these e-mails: {{unsubscribe_url}}',
      purpose: 'canvass invitation'
    })
    t.match(summary, { sent: 2, failed: 0 })
    t.same(summary.skipped, [
      { person_id: cara.person_id, reason: 'no consent to e-mail' },
      { person_id: dan.person_id, reason: 'do not contact' },
      { person_id: eve.person_id, reason: 'no e-mail address' }
    ])
    t.equal(mail.received.length, 2, 'two messages reached the server')
    const byTo = new Map(mail.received.map(m => [m.to !== undefined && !Array.isArray(m.to) ? m.to.value[0].address : '', m]))
    t.same([...byTo.keys()].sort(), ['ana.alvarez@example.test', 'ben.okafor@example.test'], 'nobody without consent, nobody do-not-contact')
    const toAna = byTo.get('ana.alvarez@example.test') as ParsedMail
    const toBen = byTo.get('ben.okafor@example.test') as ParsedMail
    t.equal(toAna.subject, 'Saturday canvass, Ana')
    t.equal(toBen.subject, 'Saturday canvass, Ben')
    t.equal(toAna.from?.text, '"Lopez for Council" <hello@lopez.test>')
    t.match(toAna.text, /^Dear Ana María Alvarez,\n\nWe are knocking doors/)
    t.match(toAna.text, /This went to ana\.alvarez@example\.test\./)
    t.match(toBen.text, /^Dear Ben Okafor,/)
    const listUnsubscribe = header(toAna, 'list-unsubscribe') ?? ''
    t.match(listUnsubscribe, new RegExp(`^<${baseUrl.origin}/unsubscribe\\?t=[A-Za-z0-9_.-]+>$`))
    t.equal(header(toAna, 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click')
    anaUnsubscribe = listUnsubscribe.slice(1, -1)
    t.ok(toAna.text?.includes(anaUnsubscribe), 'the body shows the same link')
    t.not(header(toBen, 'list-unsubscribe'), `<${anaUnsubscribe}>`, 'each recipient has their own link')

    const entries = await log(summary.send_id)
    t.equal(entries.length, 5, 'one record per recipient')
    const anaEntry = entries.find(e => e.person_id === ana.person_id)
    t.match(anaEntry, { channel: 'email', address: 'ana.alvarez@example.test', purpose: 'canvass invitation', status: 'sent', response: /^250/, message_id: /^<.+@.+>$/, sent_by: /@/ })
    t.equal(anaEntry?.message_id, toAna.messageId, 'the Message-ID the server received')
    t.match(entries.find(e => e.person_id === dan.person_id), { status: 'skipped', response: 'do not contact', address: 'dan.k@example.test' })
  })

  await t.test('an unknown merge field is refused before anything is sent', async t => {
    const before = mail.received.length
    await t.rejects(call('send-email', { person_ids: [ben.person_id], subject: 'Hi {{nickname}}', body: 'Hello' }),
      new ServerFunctionError(400, 'invalid arguments: /subject: unknown merge field {{nickname}}; the fields are {{name}}, {{first_name}}, {{email}}, {{unsubscribe_url}}', 'BERTH_UNKNOWN_MERGE_FIELD'))
    t.equal(mail.received.length, before)
    t.equal(await statusOf(call('send-email', { subject: 'Hi', body: 'Hello' })), 400, 'no recipients named')
    t.equal(await statusOf(call('send-email', { person_ids: [ben.person_id], list_id: 'x', subject: 'Hi', body: 'Hello' })), 400, 'both ways at once')
  })

  await t.test('the unsubscribe link: a page on GET, one click by POST, honoured on the next send', async t => {
    const page = await fetch(anaUnsubscribe)
    t.equal(page.status, 200)
    t.match(page.headers.get('content-type'), /^text\/html/)
    const html = await page.text()
    t.match(html, /<form method="post" action="\/unsubscribe\?t=[^"]+"><button type="submit"[^>]*>Unsubscribe<\/button>/)
    t.match((await call<{ person: { consent: { email: boolean } } }>('person-detail', { person_id: ana.person_id })).person.consent, { email: true }, 'GET changed nothing')

    const forged = new URL(anaUnsubscribe)
    const token = forged.searchParams.get('t') ?? ''
    forged.searchParams.set('t', `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`)
    t.equal((await fetch(forged, { method: 'POST' })).status, 400, 'an altered token')
    t.equal((await fetch(new URL('/unsubscribe?t=nonsense', baseUrl), { method: 'POST' })).status, 400, 'a malformed token')
    t.equal((await fetch(new URL('/unsubscribe', baseUrl))).status, 400, 'no token')

    // What a mail client does for List-Unsubscribe-Post (RFC 8058), without any session.
    const posted = await fetch(anaUnsubscribe, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' })
    t.equal(posted.status, 200)
    t.match(await posted.text(), /You will receive no more e-mails from us/)
    t.match((await call<{ person: { consent: { email: boolean, sms: boolean } } }>('person-detail', { person_id: ana.person_id })).person.consent, { email: false, sms: true }, 'e-mail consent withdrawn, SMS kept')
    const { suppressions } = await call<{ suppressions: Array<{ address: string, channel: string, reason: string }> }>('list-suppressions', {})
    t.match(suppressions, [{ address: 'ana.alvarez@example.test', channel: 'email', reason: /unsubscribed/ }])
    t.equal((await fetch(anaUnsubscribe, { method: 'POST' })).status, 200, 'a second click is harmless')

    // Even with consent given again, the suppression list holds.
    await save({ person_id: ana.person_id, name: 'Ana María Alvarez', consent: { email: true } })
    const before = mail.received.length
    const again = await call<Summary>('send-email', { person_ids: [ana.person_id, ben.person_id], subject: 'Reminder', body: 'See you Saturday, {{first_name}}.' })
    t.match(again, { sent: 1, failed: 0, skipped: [{ person_id: ana.person_id, reason: 'on the suppression list' }] })
    t.same(mail.received.slice(before).map(m => m.subject), ['Reminder'])
    t.equal((mail.received.at(-1)?.to as { text: string }).text, '"Ben Okafor" <ben.okafor@example.test>')
  })

  await t.test('suppression list: staff add, admin removes', async t => {
    await call('add-suppression', { address: 'Ben.Okafor@Example.test', reason: 'asked by phone' })
    const summary = await call<Summary>('send-email', { person_ids: [ben.person_id], subject: 'Hi', body: 'Hello {{name}}' })
    t.same(summary.skipped, [{ person_id: ben.person_id, reason: 'on the suppression list' }])
    t.equal(await statusOf(call('remove-suppression', { address: 'ben.okafor@example.test' })), 403, 'staff may not lift a suppression')
    const admin = await login('admin')
    t.same(await call('remove-suppression', { address: 'ben.okafor@example.test' }, admin), { removed: true })
    t.same(await call('remove-suppression', { address: 'ben.okafor@example.test' }, admin), { removed: false })
  })

  await t.test('a recipient the server refuses is failed; the others are sent', async t => {
    const fay = await save({ name: 'Fay Refused', email: 'fay@example.test', consent: { email: true } })
    const gil = await save({ name: 'Gil Accepted', email: 'gil@example.test', consent: { email: true } })
    mail.refuse.add('fay@example.test')
    const before = mail.received.length
    const summary = await call<Summary>('send-email', { person_ids: [fay.person_id, ben.person_id, gil.person_id], subject: 'Volunteer night', body: 'Hi {{first_name}}' })
    t.match(summary, { sent: 2, failed: 1, skipped: [] })
    t.same(mail.received.slice(before).map(m => m.subject).sort(), ['Volunteer night', 'Volunteer night'])
    const entries = await log(summary.send_id)
    t.match(entries.find(e => e.person_id === fay.person_id), { status: 'failed', address: 'fay@example.test', response: /^550 .*mailbox unavailable/ })
    t.same(entries.filter(e => e.status === 'sent').map(e => e.person_id).sort(), [ben.person_id, gil.person_id].sort())
  })

  await t.test('SMS through the stand-in SMS provider; its 500 is a failure', async t => {
    sms.failFor.add('+14155550105')
    const summary = await call<Summary>('send-sms', { person_ids: [ana.person_id, cara.person_id, dan.person_id, eve.person_id, ben.person_id], body: 'Hi {{first_name}}, canvass Sat 10:00 at the library. Reply STOP to opt out.', purpose: 'canvass reminder' })
    t.match(summary, { sent: 1, failed: 1 })
    t.same(summary.skipped, [
      { person_id: cara.person_id, reason: 'no phone number' },
      { person_id: dan.person_id, reason: 'do not contact' },
      { person_id: ben.person_id, reason: 'no consent to SMS' }
    ])
    t.same(sms.received.map(m => [m.to, m.body]).sort(), [
      ['+14155550101', 'Hi Ana, canvass Sat 10:00 at the library. Reply STOP to opt out.'],
      ['+14155550105', 'Hi Eve, canvass Sat 10:00 at the library. Reply STOP to opt out.']
    ], 'each with their own first name')
    t.equal(sms.received.length, 2)
    t.ok(sms.received.every(m => m.authorization === `Bearer ${SMS_TOKEN}`), 'the bearer token each time')
    const entries = await log(summary.send_id)
    t.match(entries.find(e => e.person_id === ana.person_id), { channel: 'sms', status: 'sent', address: '+14155550101', response: 'HTTP 201', message_id: /^sms-\d$/, purpose: 'canvass reminder' })
    t.match(entries.find(e => e.person_id === eve.person_id), { status: 'failed', response: 'HTTP 500: {"error":"carrier unavailable"}' })
  })

  await t.test('roles: volunteers send nothing; readonly reads the log without addresses', async t => {
    const volunteer = await login('volunteer')
    t.equal(await statusOf(call('send-email', { person_ids: [ben.person_id], subject: 'Hi', body: 'Hello' }, volunteer)), 403)
    t.equal(await statusOf(call('send-sms', { person_ids: [ben.person_id], body: 'Hello' }, volunteer)), 403)
    t.equal(await statusOf(call('list-send-log', {}, volunteer)), 403)
    const readonly = await login('readonly')
    t.equal(await statusOf(call('send-email', { person_ids: [ben.person_id], subject: 'Hi', body: 'Hello' }, readonly)), 403)
    const { items } = await call<{ items: LogEntry[] }>('list-send-log', { person_id: ana.person_id, limit: 50 }, readonly)
    t.ok(items.length >= 3, 'Ana\'s records of every send')
    t.ok(items.every(e => e.person_id === ana.person_id))
    t.same([...new Set(items.flatMap(Object.keys))].sort(), ['at', 'channel', 'message_id', 'person_id', 'purpose', 'send_id', 'status'], 'no address, answer or sender')
    t.notOk(JSON.stringify(items).includes('@example.test'))
    t.equal(await statusOf(call('list-suppressions', {}, readonly)), 403)
  })

  await t.test('the send log pages newest first', async t => {
    const first = await call<{ items: LogEntry[], next_cursor: string | null }>('list-send-log', { limit: 3 })
    t.equal(first.items.length, 3)
    t.type(first.next_cursor, 'string')
    const second = await call<{ items: LogEntry[] }>('list-send-log', { limit: 3, cursor: first.next_cursor })
    t.ok(first.items.at(-1)!.send_id >= second.items[0].send_id, 'older records on the next page')
    t.equal(first.items[0].channel, 'sms', 'the latest send first')
  })

  await t.test('a shift reminder reaches the volunteer who signed up, once, without campaign consent', async t => {
    const before = mail.received.length
    const startsAt = new Date(Date.now() + 3 * 3_600_000)
    const event = await call<{ shifts: Array<{ shift_id: string }> }>('save-event', { title: 'Library canvass', location: { text: 'Main library', lat: 37.77, lon: -122.42 }, shifts: [{ starts_at: startsAt.toISOString(), ends_at: new Date(startsAt.getTime() + 7_200_000).toISOString(), capacity: 4 }] })
    const volunteer = await login('volunteer')
    await call('rsvp-shift', { shift_id: event.shifts[0].shift_id }, volunteer)
    const blocked = await call<{ person_id: string }>('rsvp-shift', { shift_id: event.shifts[0].shift_id, person: { name: 'Nope Nobody', email: 'nope@example.test' } })
    await call('save-person', { person_id: blocked.person_id, name: 'Nope Nobody', consent: { do_not_contact: true } })
    const run = await call<{ sent: Array<{ sent: number, skipped: unknown[] }> }>('send-shift-reminders', {})
    t.match(run.sent, [{ sent: 1, skipped: [{ reason: 'do not contact' }] }])
    const reminder = mail.received.slice(before)
    t.equal(reminder.length, 1)
    t.match(reminder[0].subject, /^Reminder: Library canvass/)
    t.equal(reminder[0].to !== undefined && !Array.isArray(reminder[0].to) ? reminder[0].to.value[0].address : '', 'volunteer@campaign.test', 'the volunteer who signed up, who never gave campaign e-mail consent')
    t.match(header(reminder[0], 'list-unsubscribe'), /unsubscribe/, 'still with its unsubscribe link')
    t.same((await call<{ sent: unknown[] }>('send-shift-reminders', {})).sent, [], 'a second run sends nothing')
    t.equal(mail.received.length, before + 1)
  })

  await t.test('the SMTP server gone: each recipient failed with the error, and the call answers', async t => {
    await mail.stop()
    const summary = await call<Summary>('send-email', { person_ids: [ben.person_id, cara.person_id], subject: 'Hi', body: 'Hello {{name}}' })
    t.match(summary, { sent: 0, failed: 1, skipped: [{ person_id: cara.person_id, reason: 'no consent to e-mail' }] })
    t.match((await log(summary.send_id)).find(e => e.person_id === ben.person_id), { status: 'failed', response: /^(ESOCKET|ECONNECTION): / })
  })
})

t.test('sending off without smtp_url or sms_url: 503', async t => {
  const { call } = await campaignApp(t)
  const ana = await call<Saved>('save-person', { name: 'Ana Alvarez', email: 'ana@example.test', phone: '+14155550101', consent: { email: true, sms: true } })
  await t.rejects(call('send-email', { person_ids: [ana.person_id], subject: 'Hi', body: 'Hello' }),
    new ServerFunctionError(503, 'e-mail sending is off: set [campaign].smtp_url (CAMPAIGN_SMTP_URL) to an SMTP server', 'BERTH_SENDING_OFF'))
  t.equal(await statusOf(call('send-sms', { person_ids: [ana.person_id], body: 'Hello' })), 503)
  t.same((await call<{ items: unknown[] }>('list-send-log', {})).items, [], 'nothing logged')
})
