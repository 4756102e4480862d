// The sending page in headless Chromium, at 1280 px and at 390 px (one browser), e-mail through a real
// SMTP server on loopback: staff compose an e-mail to a saved list with merge fields, the preview shows
// what the first recipient gets and who is skipped (no consent, do not contact), the send shows its
// summary, the SMTP server received the consenting members' messages with their names merged, and the
// send log lists the recipients; a suppression added through the form is listed; the replies to texts
// say they are not received (no provider's token); readonly see the send log without addresses and no
// compose form, suppressions or replies; a volunteer has no Sending in the navigation. On the phone no
// page scrolls sideways.
import t from 'tap'
import type { ParsedMail } from 'mailparser'
import { SIZES, appInBrowser, card, moduleHidden, noSidewaysScroll, rowsOf, signIn, signOut } from '../../support/campaign-browser.js'
import { chromiumBinary } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { pollUntil } from '../../support/poll.js'
import { mailServer } from '../../support/smtp.js'


const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('staff preview and send an e-mail to a saved list through a real SMTP server; readonly read the send log only', async t => {
    const mail = await mailServer(t)
    const { app, user, call, browser, page } = await appInBrowser(t, executablePath, { smtp_url: `smtp://127.0.0.1:${mail.port}`, mail_from: 'Lopez for Council <hello@lopez.test>' })
    page.on('dialog', dialog => { void dialog.accept() }) // the send's confirmation

    for (const size of SIZES) {
      await t.test(size.name, async t => {
        await page.setViewportSize({ width: size.width, height: size.height })
        await browser.clearCookies() // a size that failed half-way leaves no session behind
        const tag = `newsletter-${size.name}`
        const email = (who: string): string => `${who}.${size.name}@example.test`
        const save = async (fields: object): Promise<string> => (await call<{ person_id: string }>('save-person', fields)).person_id
        const ana = await save({ name: 'Ana Alvarez', email: email('ana'), tags: [tag], consent: { email: true } })
        const ben = await save({ name: 'Ben Okafor', email: email('ben'), tags: [tag, 'housing'], consent: { email: true, sms: true } })
        const cara = await save({ name: 'Cara Nguyen', email: email('cara'), tags: [tag], consent: { email: false, sms: true } })
        const dan = await save({ name: 'Dan Kowalski', email: email('dan'), tags: [tag], consent: { email: true, do_not_contact: true } })
        await save({ name: 'Eli Elsewhere', email: email('eli'), tags: ['housing'], consent: { email: true } })
        const list = await call<{ list_id: string, count: number }>('save-list', { name: `Newsletter (${size.name})`, filter: { tags: [tag] } })
        t.equal(list.count, 4, 'the list has the four tagged people')

        // Staff: compose an e-mail to the list with merge fields and preview it.
        const before = mail.received.length
        await signIn(page, app, user('staff'), '/sending')
        await page.waitForSelector(`select[name="list_id"] option[value="${list.list_id}"]`, { state: 'attached' })
        const compose = page.locator('[data-testid="compose"]')
        await compose.locator('select[name="list_id"]').selectOption(list.list_id)
        await compose.locator('input[name="purpose"]').fill('newsletter')
        await compose.locator('input[name="subject"]').fill('News for you, {{first_name}}')
        await compose.locator('textarea[name="body"]').fill('Hello {{first_name}},\n\nThe canvass is on Saturday.\n\nLopez for Council')
        await compose.locator('button[value="preview"]').click()
        await page.waitForSelector('[data-testid="preview"] td:has-text("Dan Kowalski")')
        t.match(await page.textContent('[data-testid="preview"] p'), /^2 of 4 will receive it; 2 skipped\./, 'two of the four')
        t.match(await page.textContent('[data-testid="preview"] .letter'), 'As Ana Alvarez will get it:', 'the first recipient by name')
        t.equal(await page.textContent('[data-testid="preview"] .letter strong'), 'News for you, Ana', 'the subject merged')
        t.match(await page.textContent('[data-testid="preview"] .letter pre'), /^Hello Ana,\n\nThe canvass is on Saturday\.\n\nLopez for Council\n\n--\nTo receive no more e-mails from us: https?:\/\/\S+\/unsubscribe\?t=\S+\n$/, 'the body merged, with her unsubscribe link')
        t.same((await rowsOf(page, '[data-testid="preview"]')).sort(), [['Cara Nguyen', 'no consent to e-mail'], ['Dan Kowalski', 'do not contact']], 'who is skipped and why')
        t.equal(mail.received.length, before, 'a preview sends nothing')
        await noSidewaysScroll(t, page, 'the preview')

        // Send: the summary, and the real SMTP server has the consenting members' messages.
        await compose.locator('button[value="send"]').click()
        await page.waitForSelector('[data-testid="send-summary"]')
        t.same(await page.$$eval('[data-testid="send-summary"] .stats div', divs => divs.map(div => div.textContent)), ['2sent', '0failed', '2skipped'], 'two sent, two skipped')
        t.same((await rowsOf(page, '[data-testid="send-summary"]')).sort(), [['Cara Nguyen', 'no consent to e-mail'], ['Dan Kowalski', 'do not contact']], 'the skipped by name')
        const received = mail.received.slice(before)
        const to = (address: string): ParsedMail | undefined => received.find(m => m.to !== undefined && !Array.isArray(m.to) && m.to.value[0].address === address)
        t.equal(received.length, 2, 'exactly two messages reached the server')
        t.match(to(email('ana')), { subject: 'News for you, Ana', text: /^Hello Ana,\n\nThe canvass is on Saturday\./, from: { text: '"Lopez for Council" <hello@lopez.test>' } }, 'Ana\'s, with her name')
        t.match(to(email('ben')), { subject: 'News for you, Ben', text: /^Hello Ben,\n/ }, 'Ben\'s, with his name')
        await noSidewaysScroll(t, page, 'the send\'s summary')

        // The send log, read again after the send: this send's four records.
        const anaLogged = `[data-testid="send-log"] tbody tr:has-text("${email('ana')}")`
        await page.waitForSelector(anaLogged)
        await page.click(`${anaLogged} button.link`)
        await page.waitForSelector('button:has-text("All sends")')
        await pollUntil(async () => await page.locator('[data-testid="send-log"] tbody tr').count() === 4, { what: 'the send log\'s four records' })
        const logged = new Map((await rowsOf(page, '[data-testid="send-log"]')).map(([, status, channel, purpose, person, address]) => [person, [status, channel, purpose, address]]))
        t.match(logged.get(ana), ['sent', 'e-mail', 'newsletter', email('ana')], 'Ana: sent')
        t.match(logged.get(ben), ['sent', 'e-mail', 'newsletter', email('ben')], 'Ben: sent')
        t.match(logged.get(cara), ['skipped', 'e-mail', 'newsletter'], 'Cara: skipped')
        t.match(logged.get(dan), ['skipped', 'e-mail', 'newsletter'], 'Dan: skipped')
        await noSidewaysScroll(t, page, 'the send log')

        // A suppression added through the form is listed.
        const suppressions = card(page, 'Suppression list')
        await suppressions.locator('input[name="address"]').fill(`Fay.${size.name}@Example.TEST`)
        await suppressions.locator('input[name="reason"]').fill('asked by phone')
        await suppressions.locator('button[type="submit"]').click()
        const suppressed = `[data-testid="suppressions"] tbody tr:has-text("fay.${size.name}@example.test")`
        await page.waitForSelector(suppressed)
        t.match(await page.$$eval(`${suppressed} td`, tds => tds.map(td => td.textContent)), [`fay.${size.name}@example.test`, 'asked by phone', /staff@campaign\.test/], 'by its address, with the reason and who added it')
        t.equal(await page.locator('[data-testid="suppressions"] button:has-text("Remove")').count(), 0, 'staff may not remove one')
        await noSidewaysScroll(t, page, 'the suppression list')
        await card(page, 'Replies to texts').locator('text=Replies are not received').waitFor()
        t.equal(await page.locator('[data-testid="sms-replies"] tbody tr').count(), 0, 'no replies without the provider\'s token')
        await signOut(page)

        // Readonly: the send log without addresses; no compose form, no suppressions.
        await signIn(page, app, user('readonly'), '/sending')
        await page.waitForSelector(`[data-testid="send-log"] tbody tr:has-text("${ana}")`)
        t.ok(await page.locator(`[data-testid="send-log"] tbody tr:has-text("${ben}")`).count() > 0, 'Ben\'s record too')
        t.notMatch(await page.textContent('[data-testid="send-log"]'), '@', 'no addresses')
        t.equal(await page.locator('[data-testid="compose"]').count(), 0, 'no compose form')
        t.equal(await page.locator('[data-testid="suppressions"]').count(), 0, 'no suppression list')
        t.equal(await page.locator('[data-testid="sms-replies"]').count(), 0, 'no replies to texts')
        t.ok(await page.locator('nav#modules a[data-module="sending"]').count() === 1, 'Sending in their navigation')
        await noSidewaysScroll(t, page, 'the send log for readonly')
        await signOut(page)

        // A volunteer: no Sending in the navigation.
        await moduleHidden(t, page, app, user('volunteer'), 'sending')
      })
    }
  })
}
