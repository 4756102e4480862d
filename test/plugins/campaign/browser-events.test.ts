// The events page in headless Chromium, at 1280 px and at 390 px (one browser): a volunteer sees an
// upcoming event with its free places and signs up through the page; staff open the shift's roster,
// see her there and check her in. On the phone the page does not scroll sideways.
import t from 'tap'
import { SIZES, appInBrowser, noSidewaysScroll, signIn, signOut } from '../../support/campaign-browser.js'
import { chromiumBinary } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'

const inHours = (h: number): string => new Date(Math.floor(Date.now() / 60_000) * 60_000 + h * 3_600_000).toISOString()

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('a volunteer RSVPs on the events page; staff check her in from the roster', async t => {
    const { app, user, call, page } = await appInBrowser(t, executablePath)

    for (const [i, size] of SIZES.entries()) {
      await t.test(size.name, async t => {
        await page.setViewportSize({ width: size.width, height: size.height })
        const title = `Weekend canvass, Eastside (${size.name})`
        const event = await call<{ shifts: Array<{ shift_id: string }> }>('save-event', {
          title,
          description: 'Door-knocking on Elm and Oak streets.',
          location: { text: 'Eastside community hall, 12 Elm Street', lat: 52.5163, lon: 13.3777 },
          shifts: [{ starts_at: inHours(48 + 24 * i), ends_at: inHours(51 + 24 * i), capacity: 3, skills: ['canvassing'] }]
        })
        const shift = `[data-shift="${event.shifts[0].shift_id}"]`

        await signIn(page, app, user('volunteer'), '/events')
        await page.waitForSelector(`${shift} [data-testid="places"]`)
        t.match(await page.textContent(`${shift} [data-testid="places"]`), '3 of 3 places free')
        t.equal(await page.locator('[data-testid="event-form"]').count(), 0, 'no event form for a volunteer')
        t.equal(await page.locator(`${shift} button:has-text("Roster")`).count(), 0, 'no roster for a volunteer')
        await page.click(`${shift} button:has-text("Sign up")`)
        await page.waitForSelector(`${shift} [data-testid="mine"]`)
        t.match(await page.textContent(`${shift} [data-testid="mine"]`), 'You are signed up')
        t.match(await page.textContent(`${shift} [data-testid="places"]`), '2 of 3 places free')
        await noSidewaysScroll(t, page, 'signed up')
        await signOut(page)

        await signIn(page, app, user('staff'), '/events')
        await page.waitForSelector(`${shift} button:has-text("Roster")`)
        await page.click(`${shift} button:has-text("Roster")`)
        const entry = `${shift} [data-testid="roster"] li[data-state="confirmed"]`
        await page.waitForSelector(entry)
        t.match(await page.textContent(entry), /Volunteer User[\s\S]*volunteer@campaign\.test[\s\S]*confirmed/)
        await page.click(`${entry} button:has-text("Check in")`)
        await page.waitForSelector(`${shift} [data-testid="roster"] li[data-state="checked_in"]`)
        t.match(await page.textContent(`${shift} [data-testid="roster"]`), /1 checked in/)
        t.ok(await page.isVisible('[data-testid="event-form"]'), 'staff have the event form')
        await noSidewaysScroll(t, page, 'the roster open')
        await signOut(page)
      })
    }
  })
}
