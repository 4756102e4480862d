// Replies to texts through the SMS provider's webhook, signed as Twilio signs them (the signature
// computed here by Twilio's published recipe, checked against its published example): refused without
// the signature or with one for another URL or form; every carrier keyword acting on the sender's
// consent and the suppression list, START after STOP, HELP answered with the help text, an unknown
// number logged without a person, a MessageSid handled once (also when sent five times at once); the
// person who replied STOP left out of the next SMS send; the reply log and a person's replies by role;
// SMS copy promising STOP only with replies received; the token and the senders kept out of the log.
import { createHmac } from 'node:crypto'
import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import campaign from '../../../../plugins/campaign/index.js'
import { keywordOf, twilioSignature, twiml } from '../../../../plugins/campaign/modules/sending/sms-replies.js'
import { callServerFunction } from '../../../../plugins/campaign/client.js'
import devIdp from '../../../../plugins/dev-idp/index.js'
import { campaignApp, campaignKernel, scriptedLogin, statusOf } from '../../../support/campaign.js'
import { testKernel } from '../../../support/kernel.js'
import { startChatStandIn } from '../../../support/chat-standin.js'
import { smsProvider } from '../../../support/sms-provider.js'
import { TRANSIT } from '../fixtures/composition.js'

const TOKEN = 'twilio-auth-token-5b1e9c0d'
/** Where the provider posts: the app behind a proxy, at another address than the listener's. */
const PUBLIC_URL = 'https://campaign.lopez.example/sms/inbound'
const HELP = 'Lopez for Council <lopez.example> & friends: reply STOP to stop, START to come back.'

interface Reply { reply_id: string, message_sid: string, from?: string, to?: string, body?: string, keyword?: string | null, action?: string, person_id?: string | null, received_at?: string }
interface Person { person_id: string, consent: { sms: boolean } }

/** Twilio's recipe, written out here: HMAC-SHA1 with the auth token over the URL and each POST parameter's name and value, sorted by name; base64. */
const signed = (url: string, form: Record<string, string>, token = TOKEN): string =>
  createHmac('sha1', token).update(url + Object.keys(form).sort().map(name => name + form[name]).join('')).digest('base64')

t.test('the signature, the keywords and the answers', async t => {
  const example = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' }
  t.equal(twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', Object.entries(example)), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', 'Twilio\'s published example')
  t.equal(twilioSignature(TOKEN, PUBLIC_URL, Object.entries({ To: '+1', Body: 'b', From: '+2' })), signed(PUBLIC_URL, { To: '+1', Body: 'b', From: '+2' }))
  for (const word of ['STOP', 'stop', ' Stop ', 'STOPALL', 'Unsubscribe', 'CANCEL', 'end', 'QUIT\n']) t.equal(keywordOf(word), 'stop', JSON.stringify(word))
  for (const word of ['START', 'yes', 'Unstop']) t.equal(keywordOf(word), 'start', word)
  for (const word of ['HELP', ' info ']) t.equal(keywordOf(word), 'help', word)
  for (const word of ['stop please', 'STOP.', 'yes!', 'halt', '']) t.equal(keywordOf(word), null, JSON.stringify(word))
  t.equal(twiml(), '<?xml version="1.0" encoding="UTF-8"?><Response></Response>')
  t.equal(twiml('A & B <c> "d" \'e\'\u0007'), '<?xml version="1.0" encoding="UTF-8"?><Response><Message>A &amp; B &lt;c&gt; &quot;d&quot; &apos;e&apos;</Message></Response>', 'escaped, and what XML cannot hold dropped')
})

t.test('refused at start: a webhook URL without the token that checks its requests, a URL that is none, a secret without the secrets plugin', async t => {
  const cases: Array<[string, NodeJS.ProcessEnv, Record<string, unknown>, RegExp]> = [
    ['URL alone', { CAMPAIGN_SMS_INBOUND_URL: PUBLIC_URL }, {}, /\[campaign\]\.sms_inbound_url \(CAMPAIGN_SMS_INBOUND_URL\) is set but sms_inbound_auth_token \(CAMPAIGN_SMS_INBOUND_AUTH_TOKEN\) is empty: replies cannot be checked without the provider's auth token/],
    ['not an http URL', { CAMPAIGN_SMS_INBOUND_AUTH_TOKEN: TOKEN }, { sms_inbound_url: 'ftp://campaign.lopez.example/sms/inbound' }, /\[campaign\]\.sms_inbound_url \(CAMPAIGN_SMS_INBOUND_URL\) must be an http\(s\) URL/],
    ['a secret', {}, { sms_inbound_auth_token: '${secrets.TWILIO_AUTH_TOKEN}' }, /\[campaign\]\.sms_inbound_auth_token names a secret, but the secrets plugin is not enabled/]
  ]
  for (const [what, env, config, message] of cases) {
    const kernel = await testKernel(t, { plugins: [devIdp, campaign], env, config: { campaign: config }, noStart: true })
    await t.rejects(kernel.start(), message, what)
  }
})

t.test('replies through the webhook', async t => {
  const SMS_TOKEN = 'outbound-provider-token'
  const provider = await smsProvider(t, SMS_TOKEN)
  const logged: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk: Buffer, _encoding, done) { logged.push(chunk.toString()); done() } }))
  const kernel = await campaignKernel(t, { sms_url: provider.url, sms_token: SMS_TOKEN, sms_inbound_auth_token: TOKEN, sms_inbound_url: PUBLIC_URL, sms_help_text: HELP }, { logger })
  const baseUrl = kernel.url('app')
  const users = kernel.service('campaign').devIdp?.users ?? []
  const login = async (role: string): Promise<string> => (await scriptedLogin(baseUrl, users.find(u => u.role === role) as { username: string, password: string })).cookie
  const cookies = { admin: await login('admin'), staff: await login('staff'), volunteer: await login('volunteer'), readonly: await login('readonly') }
  const call = async <T>(name: string, args: object, cookie = cookies.staff): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  const ana = await call<Person>('save-person', { name: 'Ana Alvarez', phone: '+1 415 555 0101', consent: { sms: true } })
  const ben = await call<Person>('save-person', { name: 'Ben Okafor', phone: '+14155550102', consent: { sms: true } })
  const cara = await call<Person>('save-person', { name: 'Cara Nguyen', phone: '+14155550103', consent: { sms: true } })

  let sids = 0
  /** A reply as the provider posts it, signed for `signedFor` (the configured URL unless given) with `query` on the request. */
  const post = async (from: string, body: string, options: { sid?: string, signedFor?: string, token?: string, signature?: string | null, query?: string, alter?: Record<string, string> } = {}): Promise<Response> => {
    const form = { ToCountry: 'US', To: '+18005550199', From: from, Body: body, MessageSid: options.sid ?? `SM${String(++sids).padStart(32, '0')}`, NumMedia: '0', AccountSid: 'AC0123' }
    const signature = options.signature === undefined ? signed((options.signedFor ?? PUBLIC_URL) + (options.query ?? ''), form, options.token) : options.signature
    return await fetch(new URL(`/sms/inbound${options.query ?? ''}`, baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature !== null ? { 'x-twilio-signature': signature } : {}) },
      body: new URLSearchParams({ ...form, ...options.alter }).toString()
    })
  }
  const answer = async (response: Response): Promise<string> => {
    t.equal(response.status, 200)
    t.match(response.headers.get('content-type'), /^text\/xml/)
    return await response.text()
  }
  const EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
  const log = async (args: object = {}, cookie?: string): Promise<Reply[]> => (await call<{ items: Reply[] }>('list-sms-replies', { limit: 200, ...args }, cookie)).items
  const consent = async (person: Person): Promise<boolean> => (await call<{ person: Person }>('person-detail', { person_id: person.person_id })).person.consent.sms
  const suppressed = async (): Promise<string[]> => (await call<{ suppressions: Array<{ address: string }> }>('list-suppressions', {})).suppressions.map(s => s.address).sort()

  await t.test('a request without the provider\'s signature of this URL and form is refused', async t => {
    const refused = async (response: Response, what: string): Promise<void> => {
      t.equal(response.status, 403, what)
      t.same(await response.json(), { error: 'the X-Twilio-Signature header is missing or is not the provider\'s signature of this webhook\'s URL and form', code: 'BERTH_FORBIDDEN' }, what)
    }
    await refused(await post('+14155550101', 'STOP', { signature: null }), 'no signature')
    await refused(await post('+14155550101', 'STOP', { signature: 'bm90IGEgc2lnbmF0dXJl' }), 'a made-up signature')
    await refused(await post('+14155550101', 'STOP', { token: 'another account\'s token' }), 'signed with another token')
    await refused(await post('+14155550101', 'STOP', { signedFor: new URL('/sms/inbound', baseUrl).href }), 'signed for the URL the request arrived at, not the configured one')
    await refused(await post('+14155550101', 'STOP', { signedFor: 'https://other-campaign.example/sms/inbound' }), 'a request another webhook received, replayed here')
    await refused(await post('+14155550101', 'STOP', { alter: { From: '+14155550102' } }), 'a parameter changed after signing')
    await refused(await post('+14155550101', 'STOP', { signedFor: `${PUBLIC_URL}?campaign=a`, query: '?campaign=b' }), 'signed with another query')
    t.same(await log(), [], 'nothing logged')
    t.equal(await consent(ana), true, 'nothing changed')
    t.equal((await fetch(new URL('/sms/inbound', baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 415, 'not a form')
    t.equal(await answer(await post('+14155550199', 'hello', { query: '?campaign=a' })), EMPTY, 'signed for the configured URL with the query it was posted with')
  })

  await t.test('every STOP keyword suppresses, every START keyword resubscribes', async t => {
    const stops = ['STOP', 'stopall', ' Unsubscribe', 'CANCEL', 'End', 'quit']
    const starts = ['START', 'Yes', 'unstop ', 'start', 'YES', 'UNSTOP']
    for (const [i, stop] of stops.entries()) {
      t.equal(await answer(await post('+14155550101', stop)), EMPTY, `${JSON.stringify(stop)} is not answered`)
      t.equal(await consent(ana), false, `${JSON.stringify(stop)}: consent withdrawn`)
      t.same(await suppressed(), ['+14155550101'], `${JSON.stringify(stop)}: the number suppressed`)
      await answer(await post('+14155550101', starts[i]))
      t.equal(await consent(ana), true, `${JSON.stringify(starts[i])}: consent given again`)
      t.same(await suppressed(), [], `${JSON.stringify(starts[i])}: the number no longer suppressed`)
    }
    const replies = await log({ person_id: ana.person_id })
    t.equal(replies.length, 12)
    t.same(replies.map(r => [r.keyword, r.action]).reverse(), stops.flatMap(() => [['stop', 'suppressed'], ['start', 'resubscribed']]), 'each logged with what it did, newest first')
    t.match(replies.at(-1), { from: '+14155550101', to: '+18005550199', body: 'STOP', person_id: ana.person_id, message_sid: /^SM\d{32}$/ })
  })

  await t.test('HELP and INFO are answered with the help text; other words change nothing', async t => {
    const help = `<?xml version="1.0" encoding="UTF-8"?><Response><Message>Lopez for Council &lt;lopez.example&gt; &amp; friends: reply STOP to stop, START to come back.</Message></Response>`
    t.equal(await answer(await post('+14155550102', 'help')), help)
    t.equal(await answer(await post('+14155550102', 'INFO')), help)
    t.equal(await answer(await post('+14155550102', 'Stop texting me about the bridge please')), EMPTY, 'a sentence is no keyword')
    t.equal(await consent(ben), true)
    t.same((await log({ person_id: ben.person_id })).map(r => [r.keyword, r.action, r.body]), [
      [null, 'none', 'Stop texting me about the bridge please'], ['help', 'help sent', 'INFO'], ['help', 'help sent', 'help']
    ])
    t.same((await log({ keyword: 'help' })).length, 2)
    t.same((await log({ keyword: 'none' })).map(r => r.body), ['Stop texting me about the bridge please', 'hello'])
  })

  await t.test('an unknown number is logged and suppressed without becoming a person', async t => {
    const before = (await call<{ total: number }>('list-people', {})).total
    await answer(await post('+14155559999', 'STOP'))
    t.equal((await call<{ total: number }>('list-people', {})).total, before, 'nobody created')
    t.match((await log())[0], { from: '+14155559999', keyword: 'stop', action: 'suppressed', person_id: null })
    t.same(await suppressed(), ['+14155559999'], 'the number is never texted, whoever holds it later')
    await answer(await post('+14155559999', 'START'))
    t.same(await suppressed(), [])
  })

  await t.test('a MessageSid is handled once', async t => {
    const sid = 'SMduplicate0000000000000000000001'
    await answer(await post('+14155550101', 'STOP', { sid }))
    await answer(await post('+14155550101', 'START'))
    t.equal(await answer(await post('+14155550101', 'STOP', { sid })), EMPTY, 'the provider sending it again')
    t.equal(await consent(ana), true, 'the STOP sent again did not undo the START after it')
    t.equal((await log()).filter(r => r.message_sid === sid).length, 1)
    const help = 'SMduplicate0000000000000000000002'
    const answers = await Promise.all(Array.from({ length: 5 }, async () => await answer(await post('+14155550102', 'HELP', { sid: help }))))
    t.equal(answers.filter(a => a.includes('<Message>')).length, 1, 'five at once: one answered with the help text')
    t.equal((await log()).filter(r => r.message_sid === help).length, 1, 'and logged once')
  })

  await t.test('START keeps a suppression staff added; STOP keeps the person out of the next send', async t => {
    await call('add-suppression', { address: '+14155550103', reason: 'asked by phone never to be texted' })
    await answer(await post('+14155550103', 'START'))
    t.match((await log({ person_id: cara.person_id }))[0], { keyword: 'start', action: 'consent given, still suppressed by staff' })
    t.same(await suppressed(), ['+14155550103'])

    await answer(await post('+14155550102', 'STOP'))
    const before = provider.received.length
    const summary = await call<{ sent: number, skipped: Array<{ person_id: string, reason: string }> }>('send-sms', { person_ids: [ana.person_id, ben.person_id, cara.person_id], body: 'Canvass Saturday at 10:00.' })
    t.match(summary, { sent: 1, skipped: [{ person_id: ben.person_id, reason: 'no consent to SMS' }, { person_id: cara.person_id, reason: 'on the suppression list' }] })
    t.same(provider.received.slice(before).map(m => m.to), ['+14155550101'], 'only Ana is texted')
    await call('save-person', { person_id: ben.person_id, name: 'Ben Okafor', consent: { sms: true } })
    const again = await call<{ sent: number, skipped: Array<{ person_id: string, reason: string }> }>('send-sms', { person_ids: [ben.person_id], body: 'Canvass Saturday at 10:00.' })
    t.match(again, { sent: 0, skipped: [{ person_id: ben.person_id, reason: 'on the suppression list' }] }, 'consent set again by staff: the number stays suppressed')
  })

  await t.test('the reply log and a person\'s replies: staff\'s, never readonly\'s or volunteers\'', async t => {
    const all = ['reply_id', 'message_sid', 'from', 'to', 'body', 'keyword', 'action', 'person_id', 'received_at'].sort()
    for (const role of ['admin', 'staff'] as const) {
      const { items, receiving } = await call<{ items: Reply[], receiving: boolean }>('list-sms-replies', { limit: 5 }, cookies[role])
      t.equal(items.length, 5, role)
      t.equal(receiving, true)
      t.same([...new Set(items.flatMap(Object.keys))].sort(), all, `${role} sees every field`)
      const detail = await call<{ sms_replies: Reply[] }>('person-detail', { person_id: ben.person_id }, cookies[role])
      t.same(detail.sms_replies.map(r => r.body), ['STOP', 'HELP', 'Stop texting me about the bridge please', 'INFO', 'help'], `${role}: Ben's replies on his page, newest first`)
    }
    for (const role of ['volunteer', 'readonly'] as const) t.equal(await statusOf(call('list-sms-replies', {}, cookies[role])), 403, role)
    const seen = await call<Record<string, unknown>>('person-detail', { person_id: ben.person_id }, cookies.readonly)
    t.same(Object.keys(seen).sort(), ['history', 'person'], 'readonly: no replies, left out rather than emptied')
    t.notMatch(JSON.stringify(seen), /5550102|STOP|bridge|help/i, 'neither his number nor his words')
    const first = await call<{ items: Reply[], next_cursor: string }>('list-sms-replies', { limit: 3 })
    const next = await call<{ items: Reply[] }>('list-sms-replies', { limit: 3, cursor: first.next_cursor })
    t.ok(first.items[2].reply_id > next.items[0].reply_id, 'older replies on the next page')
  })

  await t.test('SMS copy promises STOP while replies are received', async t => {
    await call('kb-ingest', { title: 'Transit plan', text: TRANSIT })
    const copy = await call<{ text: string, call_to_action: string }>('generate-copy', { topic: 'public transit', channel: 'sms' })
    t.equal(copy.text, 'Public transit fares will be free for students and seniors. [1] Reply YES to get involved. STOP to opt out.')
    t.equal(copy.call_to_action, 'Reply YES to get involved. STOP to opt out.')
  })

  t.notOk(logged.some(line => line.includes(TOKEN)), 'the auth token is never logged')
  t.notOk(logged.some(line => /5550101|5550102/.test(line)), 'nor a sender\'s number')
  t.ok(logged.some(line => line.includes('"msg":"SMS reply received"')), 'each reply logged by its MessageSid')
})

t.test('without the provider\'s auth token: no replies, and no SMS copy promising STOP, generated or not', async t => {
  const standIn = await startChatStandIn(t, () => 'HEADLINE: none\nTEXT: Free fares for students and seniors [1]. Reply YES to act. Reply STOP to opt out.')
  const { call, baseUrl } = await campaignApp(t, { generator_url: standIn.url, generator_model: 'stand-in', generator_fallback: true })
  const response = await fetch(new URL('/sms/inbound', baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signed(PUBLIC_URL, {}) }, body: '' })
  t.equal(response.status, 404)
  t.same(await response.json(), { error: 'SMS replies are not received: set [campaign].sms_inbound_auth_token (CAMPAIGN_SMS_INBOUND_AUTH_TOKEN) to the SMS provider\'s auth token', code: 'BERTH_NOT_FOUND' })
  t.match(await call('list-sms-replies', {}), { receiving: false, items: [] })
  await call('kb-ingest', { title: 'Transit plan', text: TRANSIT })
  const generated = await call<{ text: string, method: string }>('generate-copy', { topic: 'public transit', channel: 'sms' })
  t.equal(generated.method, 'generative')
  t.equal(generated.text, 'Free fares for students and seniors [1]. Reply YES to act.', 'the STOP the model wrote is taken out')
  t.match(standIn.received[0].body.messages[1].content, 'no opt-out instructions (no "Reply STOP")')
  await standIn.stop()
  const composed = await call<{ text: string, method: string }>('generate-copy', { topic: 'public transit', channel: 'sms' })
  t.match(composed, { method: 'extractive', text: 'Public transit fares will be free for students and seniors. [1] Reply YES to get involved.' })
})
