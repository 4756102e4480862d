// Public forms and petitions through a running app with a real SMTP server on loopback: who may make
// and list them (staff; readonly lists but cannot make; volunteers neither), an unpublished form not
// shown, the page's own policy (framed by no site) and the embed page's (framed by the configured
// sites alone, or none when the setting is empty), a signature making a person or matching one by
// e-mail without changing their record or telling the visitor, a petition counting each person once,
// the field limits, a replayed form and the honeypot; and the double opt-in: the e-mail consent stays
// as it was until the link taken from the received mail is followed (GET changes nothing, an altered
// link is refused, POST gives the consent with when and from which form, a second time says it was
// confirmed already). One limit of posts per address for every public page. Each public page's views (counted in memory, summed by instances in the store),
// sign-ups and conversion, and their export.
import type { ParsedMail } from 'mailparser'
import t from 'tap'
import { PageViews } from '../../../plugins/campaign/modules/events/page-views.js'
import { campaignApp, lmdbCampaignStore, statusOf } from '../../support/campaign.js'
import { pollUntil } from '../../support/poll.js'
import { form, inputValue } from '../../support/public-pages.js'
import { mailServer } from '../../support/smtp.js'

interface SavedForm { form_id: string, slug: string, path: string, signatures: number, published: boolean }
interface PersonDetail {
  person: { person_id: string, name: string, phone: string, postcode: string, consent: { email: boolean } }
  history: Array<{ by: string, function: string }>
}

const EMBEDDER = 'http://127.0.0.1:18099'
const PETITION = {
  title: 'Save the Eastside library',
  text: 'The council plans to close it in June.\n\nAsk them to keep it open.',
  fields: [{ field: 'first_name', required: true }, { field: 'last_name', required: false }, { field: 'postcode', required: false }, { field: 'phone', required: false }],
  consents: [{ label: 'E-mail me campaign updates', email: true }, { label: 'Show my first name on the list of signers', email: false }],
  target: 100,
  published: false
}

t.test('forms and petitions through the app', async t => {
  const mail = await mailServer(t)
  const { call, login, baseUrl } = await campaignApp(t, { smtp_url: `smtp://127.0.0.1:${mail.port}`, mail_from: 'Lopez for Council <hello@lopez.test>', public_form_min_seconds: 0, public_rsvp_per_minute: 1000, public_embed_hosts: [EMBEDDER] })
  const volunteer = await login('volunteer')
  const readonly = await login('readonly')
  const get = async (path: string): Promise<Response> => await fetch(new URL(path, baseUrl))
  const post = async (path: string, body: string): Promise<Response> =>
    await fetch(new URL(path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
  const personBy = async (email: string): Promise<PersonDetail> => {
    const { people } = await call<{ people: Array<{ person_id: string }> }>('list-people', { filter: { search: email } })
    return await call<PersonDetail>('person-detail', { person_id: people[0].person_id })
  }

  let petition: SavedForm = { form_id: '', slug: '', path: '', signatures: 0, published: false }
  await t.test('staff make forms; readonly lists them but cannot; volunteers neither', async t => {
    for (const cookie of [volunteer, readonly]) t.equal(await statusOf(call('save-form', PETITION, cookie)), 403)
    petition = await call<SavedForm>('save-form', PETITION)
    t.match(petition, { slug: /^save-the-eastside-library-[0-9a-f]{6}$/, signatures: 0, published: false })
    t.equal(petition.path, `/f/${petition.slug}`)
    t.equal((await get(petition.path)).status, 404, 'not published yet')
    petition = await call<SavedForm>('save-form', { ...PETITION, form_id: petition.form_id, published: true })
    t.match(await call('list-forms', {}, readonly), { forms: [{ form_id: petition.form_id, published: true, fields: [{ field: 'first_name' }, { field: 'last_name' }, { field: 'email', required: true }, { field: 'phone' }, { field: 'postcode' }] }] }, 'readonly lists them; the e-mail address always asked, the fields in their order')
    t.equal(await statusOf(call('list-forms', {}, volunteer)), 403)
    t.equal(await statusOf(call('save-form', { ...PETITION, fields: [{ field: 'shoe_size', required: true }] })), 400, 'a field not in the set')
  })

  let page = ''
  await t.test('the page and the embed page: their policies', async t => {
    const response = await get(petition.path)
    t.equal(response.status, 200)
    t.match(response.headers.get('content-security-policy'), /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/)
    t.equal(response.headers.get('x-frame-options'), 'DENY')
    page = await response.text()
    t.notMatch(page, /<script/i)
    t.ok(page.length < 8000, `a small page (${page.length} bytes)`)
    t.match(page, /0 of 100 signatures/)
    for (const id of ['f-first_name', 'f-last_name', 'f-email', 'f-phone', 'f-postcode', 'f-website', 'c-0', 'c-1']) t.match(page, new RegExp(`<label for="${id}"`), `a label for ${id}`)
    t.notMatch(page, /f-comment/, 'a field not asked is not shown')
    const embed = await get(`${petition.path}/embed`)
    t.equal(embed.status, 200)
    t.match(embed.headers.get('content-security-policy'), new RegExp(`; frame-ancestors ${EMBEDDER}$`), 'framed by the configured site alone')
    t.equal(embed.headers.get('x-frame-options'), null, 'no X-Frame-Options to deny it')
    t.match(await embed.text(), `action="${petition.path}/embed"`, 'its form posts to the embed page')
    t.equal((await get('/f/no-such-form/embed')).status, 404)
  })

  await t.test('a new signer: a person made, the consent to e-mail pending, the count up', async t => {
    const response = await post(petition.path, form({ first_name: 'Ana', last_name: 'Alvarez', email: 'Ana@Example.test', phone: '+1 415 555 0101', postcode: 'E1 6AN', consent: ['0', '1'], website: '', token: inputValue(page, 'token') }))
    t.equal(response.status, 200)
    t.match(await response.text(), /Thank you[\s\S]*press the link in it/)
    const ana = await personBy('ana@example.test')
    t.match(ana.person, { name: 'Ana Alvarez', phone: '+14155550101', postcode: 'E1 6AN', consent: { email: false } }, 'a new person with what was given; no e-mail consent yet')
    t.ok(ana.history.some(entry => entry.by === 'public form' && entry.function === 'public-sign'), 'the signature in their history')
    t.match(await (await get(petition.path)).text(), /1 of 100 signatures/)
  })

  await t.test('an existing person: nothing of theirs changes, nothing tells the visitor; once counted', async t => {
    await call('save-person', { name: 'Ben Brooks', email: 'ben@example.test', phone: '+1 415 555 0102' })
    const token = async (): Promise<string> => inputValue(await (await get(petition.path)).text(), 'token')
    const ben = await post(petition.path, form({ first_name: 'Somebody', last_name: 'Else', email: 'BEN@example.test', phone: '+1 415 555 0199', postcode: 'N1 1AA', consent: '0', website: '', token: await token() }))
    const newcomer = await post(petition.path, form({ first_name: 'Cy', email: 'cy@example.test', consent: '0', website: '', token: await token() }))
    t.equal(ben.status, 200)
    t.equal(await ben.text(), await newcomer.text(), 'a known address gets the very page a new one gets')
    const detail = await personBy('ben@example.test')
    t.match(detail.person, { name: 'Ben Brooks', phone: '+14155550102', postcode: '', consent: { email: false } }, 'his record as it was')
    t.ok(detail.history.some(entry => entry.by === 'public form' && entry.function === 'public-sign'), 'the signature in his history')
    await post(petition.path, form({ first_name: 'Ben', email: 'ben@example.test', website: '', token: await token() }))
    t.match(await call('list-forms', {}), { forms: [{ signatures: 3 }] }, 'Ana, Ben and Cy: Ben signing again counts nothing')
  })

  await t.test('limits, a replayed form and the honeypot', async t => {
    const refused = async (fields: Record<string, string | string[]>, message: RegExp, what: string): Promise<void> => {
      const response = await post(petition.path, form({ website: '', token: inputValue(await (await get(petition.path)).text(), 'token'), ...fields }))
      t.equal(response.status, 400, what)
      const html = await response.text()
      t.match(html, message, what)
      t.match(html, /role="alert"/, `${what}: the messages are announced`)
    }
    await refused({ email: 'dee@example.test' }, /Enter your first name/, 'a required field missing')
    await refused({ first_name: 'Dee', email: 'not-an-address' }, /Enter an e-mail address like/, 'a bad e-mail')
    await refused({ first_name: 'x'.repeat(101), email: 'dee@example.test' }, /at most 100 characters/, 'a long name')
    await refused({ first_name: 'Dee', email: 'dee@example.test', consent: '7' }, /Tick only the boxes shown/, 'a box not on the page')
    await refused({ first_name: 'Dee', email: 'dee@example.test', consent: '' }, /Tick only the boxes shown/, 'an empty box value (not the first box)')
    await refused({ first_name: 'Dee', email: 'dee@example.test', consent: ['1', '1'] }, /Tick only the boxes shown/, 'a box twice')
    await refused({ first_name: 'Dee', email: 'dee@example.test', postcode: '<b>' }, /Enter a postcode/, 'a bad postcode')
    const replay = await post(petition.path, form({ first_name: 'Dee', email: 'dee@example.test', website: '', token: inputValue(page, 'token') }))
    t.equal(replay.status, 400, 'the first signer\'s form again')
    t.match(await replay.text(), /This form was sent already/)
    const bot = await post(petition.path, form({ first_name: 'Bot', email: 'bot@spam.test', consent: '0', website: 'http://spam.test', token: inputValue(await (await get(petition.path)).text(), 'token') }))
    t.equal(bot.status, 200)
    t.match(await bot.text(), /Thank you/)
    t.same((await call<{ people: unknown[] }>('list-people', { filter: { search: 'example.test' } })).people.length, 3, 'Ana, Ben and Cy: none of the refused ones stored')
    t.same((await call<{ people: unknown[] }>('list-people', { filter: { search: 'bot@spam.test' } })).people, [], 'no bot')
  })

  await t.test('double opt-in: the link from the received mail', async t => {
    const toAna = await pollUntil(() => mail.received.find((m: ParsedMail) => JSON.stringify(m.to).includes('ana@example.test')), { what: 'the mail asking Ana to confirm' })
    t.equal(toAna.subject, 'Please confirm: campaign updates by e-mail')
    t.match(toAna.text, /Hello Ana,[\s\S]*Save the Eastside library/)
    const link = /(http:\/\/\S+\/consent\/confirm\?t=\S+)/.exec(toAna.text ?? '')?.[1] ?? ''
    t.ok(link.startsWith(new URL('/consent/confirm?t=', baseUrl).href), 'the link leads to this app')
    const view = await fetch(link)
    t.equal(view.status, 200)
    t.match(await view.text(), /Confirm e-mail updates[\s\S]*Save the Eastside library[\s\S]*<form method="post"/)
    t.match((await personBy('ana@example.test')).person, { consent: { email: false } }, 'a GET (a mail scanner) gives no consent')
    const token = new URL(link).searchParams.get('t') ?? ''
    const tampered = await fetch(new URL(`/consent/confirm?t=${encodeURIComponent(token.slice(0, -3) + 'abc')}`, baseUrl), { method: 'POST' })
    t.equal(tampered.status, 400)
    t.match(await tampered.text(), /Link not valid/)
    t.equal((await get(`/consent/confirm?t=${encodeURIComponent(inputValue(page, 'token'))}`)).status, 400, 'a form token is no consent link')
    const confirmed = await fetch(link, { method: 'POST' })
    t.equal(confirmed.status, 200)
    t.match(await confirmed.text(), /E-mail updates confirmed/)
    const ana = await personBy('ana@example.test')
    t.match(ana.person, { consent: { email: true } }, 'the consent given')
    t.ok(ana.history.some(entry => entry.by === 'public form' && entry.function === 'confirm-email-consent'), 'when and by which link, in her history')
    const again = await fetch(link, { method: 'POST' })
    t.equal(again.status, 200)
    t.match(await again.text(), /Already confirmed/)
    t.match(await (await fetch(link)).text(), /Already confirmed/)
    t.match((await personBy('ben@example.test')).person, { consent: { email: false } }, 'Ben, who has not pressed his link, gives none')
    t.notOk(mail.received.some(m => JSON.stringify(m.to).includes('bot@spam.test')), 'no mail to the bot')
    const { signatures } = await call<{ signatures: Array<{ values: { email: string }, consents: string[], email_consent: string, confirmed_at: string | null }> }>('form-signatures', { form_id: petition.form_id })
    t.match(signatures, [
      { values: { email: 'ana@example.test' }, consents: ['E-mail me campaign updates', 'Show my first name on the list of signers'], email_consent: 'confirmed', confirmed_at: /^\d{4}-/ },
      { values: { email: 'ben@example.test', first_name: 'Somebody' }, email_consent: 'pending', confirmed_at: null },
      { values: { email: 'cy@example.test' }, email_consent: 'pending' }
    ], 'staff see each signature with its consent\'s state, and what the visitor typed')
    t.equal(signatures.length, 3)
    t.equal(await statusOf(call('form-signatures', { form_id: petition.form_id }, readonly)), 403, 'readonly does not')
    t.equal(await statusOf(call('form-signatures', { form_id: 'no-such-form' })), 404)
  })
})

t.test('with no embedding site set, the embed page may be framed by none; views, sign-ups and their export', async t => {
  const { call, login, baseUrl, staff } = await campaignApp(t, { public_form_min_seconds: 0 })
  const saved = await call<SavedForm>('save-form', { title: 'Volunteer interest', fields: [{ field: 'comment', required: false }], published: true })
  const embed = await fetch(new URL(`${saved.path}/embed`, baseUrl))
  t.equal(embed.status, 200)
  t.match(embed.headers.get('content-security-policy'), /; frame-ancestors 'none'$/)
  t.equal(embed.headers.get('x-frame-options'), 'DENY')
  const html = await embed.text()
  t.match(html, /<textarea id="f-comment"/)
  t.notMatch(html, /signatures/, 'a form without a target shows no count')

  const event = await call<{ event_id: string }>('save-event', { title: 'Phone bank', location: { text: 'Hall', lat: 52.5, lon: 13.4 }, shifts: [{ starts_at: new Date(Date.now() + 86_400_000).toISOString(), ends_at: new Date(Date.now() + 90_000_000).toISOString(), capacity: 5 }] })
  const { path: eventPath } = await call<{ path: string }>('publish-event', { event_id: event.event_id, published: true })
  for (let i = 0; i < 3; i++) await (await fetch(new URL(saved.path, baseUrl))).text()
  await (await fetch(new URL(eventPath, baseUrl))).text()
  const page = await (await fetch(new URL(saved.path, baseUrl))).text()
  t.equal((await fetch(new URL('/f/no-such-form', baseUrl))).status, 404, 'an unknown page (not counted)')
  const signed = await fetch(new URL(saved.path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ email: 'eve@example.test', comment: 'Evenings', website: '', token: inputValue(page, 'token') }) })
  t.equal(signed.status, 200)
  const readonly = await login('readonly')
  const { pages } = await call<{ pages: Array<Record<string, unknown>> }>('public-page-stats', {}, readonly)
  t.same(pages.map(p => [p.page, p.path, p.views, p.signups, p.conversion]), [['event', eventPath, 1, 0, 0], ['form', saved.path, 5, 1, 0.2]], 'the embed page\'s view counts for its form; readonly may read them')
  t.equal(await statusOf(call('public-page-stats', {}, await login('volunteer'))), 403)
  const csv = await (await fetch(new URL('/export/public-pages', baseUrl), { headers: { cookie: staff } })).text()
  t.match(csv, /^page,id,title,path,published,views,signups,conversion\r?\n/)
  t.match(csv, new RegExp(`form,${saved.form_id},Volunteer interest,${saved.path},yes,5,1,0.2`))
})

t.test('one limit of posts per address across the public pages', async t => {
  const { call, baseUrl } = await campaignApp(t, { public_form_min_seconds: 0, public_rsvp_per_minute: 2 })
  const saved = await call<SavedForm>('save-form', { title: 'Survey', published: true })
  const sign = async (email: string): Promise<Response> => {
    const token = inputValue(await (await fetch(new URL(saved.path, baseUrl))).text(), 'token')
    return await fetch(new URL(saved.path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ email, website: '', token }) })
  }
  t.equal((await sign('a@example.test')).status, 200)
  t.equal((await sign('b@example.test')).status, 200)
  const limited = await fetch(new URL('/rsvp/cancel?t=x', baseUrl), { method: 'POST' })
  t.equal(limited.status, 429, 'the third post in the minute, to an event page\'s cancel link, is over the one budget')
  t.ok(Number(limited.headers.get('retry-after')) > 0)
  t.equal((await sign('c@example.test')).status, 429, 'and so is a fourth to the form')
})

t.test('page views: counted in memory, added to the store\'s totals by each instance', async t => {
  const store = lmdbCampaignStore(t)
  const one = new PageViews(store)
  const two = new PageViews(store)
  one.view('form:a')
  one.view('form:a')
  two.view('form:a')
  two.view('event:b')
  t.same([...await one.totals()], [['form:a', 2]], 'before a flush, each instance sees its own')
  await one.flush()
  await two.flush()
  await one.flush()
  one.view('form:a')
  t.same(Object.fromEntries(await one.totals()), { 'event:b': 1, 'form:a': 4 }, 'both instances\' views summed, and one not yet written')
})
