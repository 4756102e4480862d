// A public petition in headless Chromium at 390 px: a visitor signs it under the page's own policy
// (its hashed style sheet applies, no policy violation, no sideways scrolling, the Tab order through
// the fields and boxes to the button) and sees the count go up; axe-core finds no violation on the
// petition, the form with its messages and the thanks (injected in a second browser that bypasses the
// policy, which forbids every script). Then embedding: two pages on other loopback ports frame
// /f/{slug}/embed; the one whose origin is in public_embed_hosts shows the form, the other is refused
// by the frame-ancestors of the embed page's policy. Last, the events page: staff make a form there
// and see each page's views and sign-ups; readonly members see the list and figures without the buttons.
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { axeFormRun, axeViolations } from '../../support/axe.js'
import { appInBrowser, noSidewaysScroll, signIn, signOut } from '../../support/campaign-browser.js'
import { chromiumBinary } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { pollUntil } from '../../support/poll.js'
import { axePhonePage, BUTTON_COLOUR, buttonColour, PHONE, phonePage, tabOrder } from '../../support/public-page-browser.js'

/** A site on a loopback port whose one page frames `frame()` (read when asked, once the app is up). */
async function embeddingSite (t: { teardown(fn: () => unknown): void }, frame: () => string): Promise<{ origin: string }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><html lang="en"><head><title>Neighbours</title></head><body><h1>Neighbours</h1><iframe title="Petition" src="${frame()}" width="380" height="700"></iframe></body></html>`)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('a petition at 390 px, axe, and its embed page framed by the allowed site alone', async t => {
    let embedUrl = ''
    const allowed = await embeddingSite(t, () => embedUrl)
    const other = await embeddingSite(t, () => embedUrl)
    const { app, user, call, browser, page: staffPage } = await appInBrowser(t, executablePath, { public_form_min_seconds: 0, public_embed_hosts: [allowed.origin] })
    const saved = await call<{ path: string }>('save-form', {
      title: 'Keep the Eastside library open',
      text: 'The council plans to close it in June.\n\nAdd your name to ask them to keep it open.',
      fields: [{ field: 'first_name', required: true }, { field: 'last_name', required: false }, { field: 'postcode', required: false }],
      consents: [{ label: 'E-mail me campaign updates', email: true }],
      target: 500,
      published: true
    })
    const url = new URL(saved.path, app).href
    embedUrl = `${url}/embed`

    await t.test('a visitor signs, with the page\'s policy enforced', async t => {
      const { page, violations } = await phonePage(browser)
      await page.goto(url)
      t.equal(await page.textContent('h1'), 'Keep the Eastside library open')
      t.equal(await page.textContent('#tally'), '0 of 500 signatures')
      t.equal(await buttonColour(page), BUTTON_COLOUR, 'the hashed style sheet applies')
      await noSidewaysScroll(t, page, 'the petition')
      const order = await tabOrder(page, '#f-first_name', 5)
      t.same(order, ['f-last_name', 'f-email', 'f-postcode', 'c-0', 'button'], 'Tab: first and last name, e-mail, postcode, the consent box, the button (the honeypot skipped)')
      await page.getByLabel('First name').fill('Ana')
      await page.getByLabel('E-mail', { exact: true }).fill('ana@example.test')
      await page.getByLabel('E-mail me campaign updates').check()
      await page.getByRole('button', { name: 'Sign' }).click()
      await page.waitForSelector('h1:has-text("Thank you")')
      t.match(await page.textContent('main'), 'Your signature is counted')
      await noSidewaysScroll(t, page, 'the thanks')
      await page.goto(url)
      t.equal(await page.textContent('#tally'), '1 of 500 signatures', 'the count went up')
      t.same(violations, [], 'no policy violation reported')
    })

    await t.test('axe-core, in a browser that bypasses the policy to inject it', async t => {
      const page = await axePhonePage(t, executablePath)
      await page.goto(url)
      t.same(await axeViolations(page), [], 'the petition')
      await axeFormRun(t, page, {
        fields: { 'First name': 'Ben', 'E-mail': 'ben@example.test' },
        wrong: { label: 'Postcode (optional)', id: 'f-postcode', value: '<b>', message: 'Enter a postcode', fixed: 'E1 6AN' },
        button: 'Sign',
        done: 'h1:has-text("Thank you")'
      })
    })

    await t.test('the embed page: shown on the allowed site, refused on another', async t => {
      const page = await browser.newPage()
      await page.goto(allowed.origin)
      const framed = page.frameLocator('iframe[title="Petition"]')
      t.equal(await framed.locator('h1').textContent(), 'Keep the Eastside library open', 'the allowed site shows the form')
      t.equal(await framed.locator('#tally').textContent(), '2 of 500 signatures')

      const refused = await browser.newPage()
      const messages: string[] = []
      refused.on('console', message => { messages.push(message.text()) })
      await refused.goto(other.origin)
      await pollUntil(() => messages.some(m => /frame-ancestors/.test(m)), { what: 'Chromium refusing the frame by its frame-ancestors' })
      const child = refused.frames().find(frame => frame !== refused.mainFrame())
      t.ok(child !== undefined, 'the frame is there')
      t.notMatch(await child?.content().catch(() => '') ?? '', /Keep the Eastside library open/, 'but holds no form')
      t.match(messages.find(m => /frame-ancestors/.test(m)), allowed.origin, 'refused: only the allowed site is listed')
    })

    await t.test('the events page: staff make a form and see the figures; readonly only reads', async t => {
      await staffPage.setViewportSize(PHONE)
      await signIn(staffPage, app, user('staff'), '/events')
      await staffPage.waitForSelector('[data-testid="forms"] li')
      t.match(await staffPage.textContent('[data-testid="forms"]'), /Keep the Eastside library open[\s\S]*2 of 500 signatures/)
      await staffPage.fill('[data-testid="new-form"] input[name="title"]', 'Volunteer with us')
      await staffPage.selectOption('[data-testid="new-form"] select[name="ask_first_name"]', 'required')
      await staffPage.check('[data-testid="new-form"] input[name="published"]')
      await staffPage.click('[data-testid="new-form"] button[type="submit"]')
      await staffPage.waitForSelector('[data-testid="forms"] li:has-text("Volunteer with us") a')
      const href = await staffPage.getAttribute('[data-testid="forms"] li:has-text("Volunteer with us") a', 'href') ?? ''
      t.match(href, /^\/f\/volunteer-with-us-[0-9a-f]{6}$/, 'made and published from the page')
      const made = await (await fetch(new URL(href, app))).text()
      t.match(made, /<label for="f-first_name">First name<\/label>/, 'asking the first name, required')
      t.match(made, /E-mail me campaign updates/, 'with the e-mail updates box')
      await staffPage.reload()
      await staffPage.waitForSelector('[data-testid="page-stats"] tbody tr')
      const petitionRow = await staffPage.textContent('[data-testid="page-stats"] tr:has-text("Keep the Eastside library open")') ?? ''
      t.match(petitionRow, /Keep the Eastside library open[\s\S]*2/, 'the petition\'s figures')
      t.equal(await staffPage.locator('a[href="/export/public-pages"][download]').count(), 1, 'and their export')
      await noSidewaysScroll(t, staffPage, 'the events page with the forms')
      await signOut(staffPage)
      await signIn(staffPage, app, user('readonly'), '/events')
      await staffPage.waitForSelector('[data-testid="page-stats"] tbody tr')
      t.equal(await staffPage.locator('[data-testid="new-form"]').count(), 0, 'readonly: no form to make one')
      t.equal(await staffPage.locator('[data-testid="forms"] button').count(), 0, 'readonly: no publish button')
    })
  })
}
