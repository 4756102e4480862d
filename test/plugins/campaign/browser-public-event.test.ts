// A public event page in headless Chromium at 390 px: staff publish the event from the events page
// (readonly members see no button), then, as visitors without a session, the page under its own policy (its hashed style sheet applies, no policy violation), the focus
// order by Tab, the first visitor RSVPs and sees her place confirmed, the second lands on the
// waitlist of the one-place shift; no sideways scrolling. Then axe-core finds no violation on the
// event page, the form shown again with its messages and the confirmation. axe is injected with
// addScriptTag, which the pages' policy (no script at all) forbids: the axe pass alone runs in a
// second browser with Playwright's `bypassCSP`; the visitors' pass runs with the policy enforced.
// The app takes forms at once (public_form_min_seconds = 0): a scripted visitor is faster than the
// 2 s minimum, which public-events.test.ts checks.
import type { Page } from 'playwright-core'
import t from 'tap'
import { axeFormRun, axeViolations } from '../../support/axe.js'
import { appInBrowser, noSidewaysScroll, signIn, signOut } from '../../support/campaign-browser.js'
import { chromiumBinary } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { axePhonePage, BUTTON_COLOUR, buttonColour, PHONE, phonePage, tabOrder } from '../../support/public-page-browser.js'

const inHours = (h: number): string => new Date(Math.floor(Date.now() / 60_000) * 60_000 + h * 3_600_000).toISOString()

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('visitors RSVP on a public event page at 390 px; axe finds nothing', async t => {
    const { app, user, call, browser, page: staffPage } = await appInBrowser(t, executablePath, { public_form_min_seconds: 0 })
    const event = await call<{ event_id: string, shifts: Array<{ shift_id: string }> }>('save-event', {
      title: 'Saturday canvass, Eastside',
      description: 'Door-knocking on Elm and Oak streets.\n\nBring comfortable shoes and water.',
      location: { text: 'Eastside community hall, 12 Elm Street', lat: 52.5163, lon: 13.3777 },
      shifts: [{ starts_at: inHours(48), ends_at: inHours(51), capacity: 1 }]
    })
    const article = `[data-event="${event.event_id}"] [data-testid="public-page"]`
    let url = ''
    await t.test('staff publish it from the events page; readonly members cannot', async t => {
      await staffPage.setViewportSize(PHONE)
      await signIn(staffPage, app, user('readonly'), '/events')
      await staffPage.waitForSelector(`[data-event="${event.event_id}"]`)
      t.equal(await staffPage.locator(article).count(), 0, 'no publish button for readonly')
      await signOut(staffPage)
      t.equal((await fetch(new URL(`/e/${event.event_id}`, app))).status, 404, 'not public yet')
      await signIn(staffPage, app, user('staff'), '/events')
      await staffPage.waitForSelector(article)
      t.match(await staffPage.textContent(article), 'Not published')
      await staffPage.click(`${article} button:has-text("Publish")`)
      await staffPage.waitForSelector(`${article} a`)
      const href = await staffPage.getAttribute(`${article} a`, 'href') ?? ''
      t.match(href, /^\/e\/saturday-canvass-eastside-[0-9a-f]{6}$/, 'the public page\'s link')
      await noSidewaysScroll(t, staffPage, 'the events page with the public link')
      url = new URL(href, app).href
      await browser.clearCookies()
    })

    const rsvp = async (page: Page, name: string, email: string): Promise<void> => {
      await page.goto(url)
      await page.getByLabel('Your name').fill(name)
      await page.getByLabel('E-mail').fill(email)
      await page.getByRole('button', { name: 'Sign up' }).click()
      await page.waitForSelector('ul.outcomes')
    }

    await t.test('as visitors without a session, with the page\'s policy enforced', async t => {
      const { page, violations } = await phonePage(browser)
      await page.goto(url)
      t.equal(await page.textContent('h1'), 'Saturday canvass, Eastside')
      t.match(await page.textContent('.places'), '1 of 1 place left')
      t.equal(await buttonColour(page), BUTTON_COLOUR, 'the hashed style sheet applies')
      t.ok(await page.isChecked('#s-0'), 'the one shift is ticked')
      await noSidewaysScroll(t, page, 'the event page')
      const order = await tabOrder(page, '#s-0', 4)
      t.same(order, ['f-name', 'f-email', 'f-phone', 'button'], 'Tab: shift, name, e-mail, phone, the button (the honeypot skipped)')

      await rsvp(page, 'Ana Alvarez', 'ana@example.test')
      t.equal(await page.textContent('h1'), 'Thank you: you are signed up')
      t.match(await page.textContent('ul.outcomes'), 'you have a place')
      await noSidewaysScroll(t, page, 'the confirmation')

      const { page: second } = await phonePage(browser)
      await second.goto(url)
      t.match(await second.textContent('.places'), 'Full: sign up to join the waitlist', 'the page says the shift is full')
      await rsvp(second, 'Ben Brooks', 'ben@example.test')
      t.equal(await second.textContent('h1'), 'You are on the waitlist')
      t.match(await second.textContent('ul.outcomes'), 'you are number 1 on its waitlist')
      t.same(violations, [], 'no policy violation reported')
    })

    await t.test('axe-core, in a browser that bypasses the policy to inject it', async t => {
      const page = await axePhonePage(t, executablePath)
      await page.goto(url)
      t.same(await axeViolations(page), [], 'the event page')
      await page.evaluate("document.querySelector('label[for=f-name]').remove()")
      t.ok((await axeViolations(page)).some(v => v.id === 'label'), 'the check sees a field without its label (taken off in this page only)')
      await page.reload()
      await axeFormRun(t, page, {
        fields: { 'Your name': 'Cy Chen', 'E-mail': 'cy@example.test' },
        wrong: { label: 'Phone (optional)', id: 'f-phone', value: '12', message: 'Enter a phone number', fixed: '' },
        button: 'Sign up',
        done: 'ul.outcomes'
      })
    })
  })
}
