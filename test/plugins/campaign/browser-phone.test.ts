// The campaign UI on a phone, in headless Chromium at 390 × 844: each role reaches each of its modules;
// no module page scrolls sideways and every control can be scrolled into view, uncovered (checked as
// the admin, who reaches every module; the home page and the menu for each role); the navigation is folded
// behind the header's Menu button (aria-expanded), opens and closes again and reaches every module;
// Sign out is on the screen and signs out. Icons are SVG: no emoji in the UI's sources, its bundle or
// any page. The sentiment line breaks where hours have no posts (read from the chart's pixels) and
// call trends show empty days. At 1200 px the side navigation stays beside the page.
// Screenshots at 390 px go to BERTH_SCREENSHOTS (docs/screenshots holds the published ones), or a temp folder.
import t, { type Test } from 'tap'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Page } from 'playwright-core'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import { UI_BUILD_DIR } from '../../../plugins/campaign/ui-routes.js'
import { builtUi, signIn } from '../../support/campaign-browser.js'
import { campaignKernel, scriptedLogin } from '../../support/campaign.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { checkPhoneLayout, PHONE } from '../../support/phone-layout.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'

const hoursAgo = (h: number): string => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - h * 3_600_000 + 60_000).toISOString()
const daysAgo = (d: number): string => new Date(Date.now() - d * 86_400_000).toISOString()

/** A pictograph (what an emoji font draws: 👍, ✅, ↔ …) or the selector asking for emoji presentation. */
const EMOJI = /[\p{Extended_Pictographic}\u{FE0F}]/u
/** What only an emoji font draws, in text the server may put on a page (a text arrow such as ↔ is fine there). */
const EMOJI_SHOWN = /[\p{Emoji_Presentation}\u{FE0F}]/u

/** The files below `dir`, recursively. */
const filesBelow = (dir: string): string[] => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter(entry => entry.isFile()).map(entry => join(entry.parentPath, entry.name))

t.test('no emoji in the UI: its sources and the built bundle', async t => {
  await builtUi()
  const source = join(import.meta.dirname, '..', '..', '..', 'plugins', 'campaign', 'ui', 'src')
  const files = [...filesBelow(source), ...filesBelow(join(UI_BUILD_DIR, 'assets'))]
  t.ok(files.some(file => file.endsWith('.js')) && files.some(file => file.endsWith('.tsx')), `${files.length} files: the sources and the bundle`)
  const found = files.flatMap(file => readFileSync(file, 'utf8').split('\n').flatMap((line, i) =>
    EMOJI.test(line) ? [`${relative(join(UI_BUILD_DIR, '..', '..'), file)}:${i + 1}: ${line.match(EMOJI)?.[0]}`] : []))
  t.same(found, [], 'nothing an emoji font would draw')
  t.ok(['👍', '✅', '↔', '❤️'].every(emoji => EMOJI.test(emoji)), 'the pattern knows emoji')
})

async function checkLayout (t: Test, page: Page, where: string): Promise<void> {
  await checkPhoneLayout(t, page, where)
  t.notMatch(await page.textContent('body'), EMOJI_SHOWN, `${where}: no emoji`)
}

/**
 * Run in the page with fractions of the plot's width: how many pixels of the sentiment line's colour
 * (#2457c5) the chart's canvas has in the column at each.
 */
const LINE_PIXELS = `(fractions => {
  const chart = document.querySelector('[data-testid="sentiment-chart"]')
  const canvas = chart.querySelector('canvas')
  const plot = chart.querySelector('.u-over').getBoundingClientRect()
  const box = canvas.getBoundingClientRect()
  const ratio = canvas.width / box.width
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data
  const near = (i, rgb) => rgb.every((c, k) => Math.abs(pixels[i + k] - c) < 40) && pixels[i + 3] > 200
  return fractions.map(f => {
    const x = Math.round((plot.left + f * plot.width - box.left) * ratio)
    let count = 0
    for (let y = Math.floor((plot.top - box.top) * ratio); y < Math.ceil((plot.bottom - box.top) * ratio); y++) if (near((y * canvas.width + x) * 4, [0x24, 0x57, 0xc5])) count++
    return count
  })
})`

/** Run in the page: whether the donors table scrolls sideways, its amounts, and those set on more than one line. */
const DONORS_TABLE = `(() => {
  const table = document.querySelector('[data-testid="donors"]')
  const lines = cell => { const range = document.createRange(); range.selectNodeContents(cell); return range.getClientRects().length }
  const amounts = [...table.querySelectorAll('tbody td')].filter(td => /^\\$[\\d,.]+$/.test(td.textContent))
  return { scrolls: table.scrollWidth > table.clientWidth, amounts: amounts.length, broken: amounts.filter(td => lines(td) > 1).map(td => td.textContent) }
})()`

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('on a phone, each role reaches every module and Sign out; on a desktop, the side navigation stays', async t => {
    await builtUi()
    const kernel = await campaignKernel(t)
    const app = kernel.url('app')
    const users = kernel.service('campaign').devIdp?.users ?? []
    const { cookie } = await scriptedLogin(app, users.find(u => u.role === 'staff') as DevUser)
    const call = async (name: string, args: object): Promise<unknown> => await callServerFunction(name, args, { baseUrl: app, headers: { cookie } })
    await call('kb-ingest', { title: 'Housing plan', text: 'We will build 5,000 affordable homes near transit stations by 2030.' })
    await call('save-volunteer', { name: 'Maximiliana Featherstonehaugh-Villanueva', email: 'maximiliana.featherstonehaugh-villanueva@volunteers.example.org', skills: ['canvassing', 'phone banking'], availability: ['sat-am', 'sun-pm'], location: { lat: 52.52, lon: 13.4 } })
    await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora.donor.with.a.long.address@donors.example.org', amount_cents: 25_000, donor_address: '1200 Pennsylvania Avenue Northwest, Apartment 14B, Washington, DC 20004', donor_occupation: 'Teacher', donor_employer: 'Springfield Public Schools' })
    // Posts in two stretches of two hours with 25 empty hours between, calls on two days 5 days apart.
    await call('ingest-posts', { posts: [30, 30, 29, 3, 2, 2].map((h, i) => ({ text: i % 2 === 0 ? 'The new bridge is great.' : 'The bridge toll is a disgrace.', source: 'a', author: `p${i}`, posted_at: hoursAgo(h) })) })
    for (const d of [5, 0]) await call('analyze-transcript', { transcript: 'Volunteer: Hi, can we count on your vote?\nVoter: Count me in!', contact: 'Carl Contact', called_at: daysAgo(d) })
    const shots = process.env.BERTH_SCREENSHOTS ?? tempDir(t, 'berth-campaign-phone-')
    mkdirSync(shots, { recursive: true })

    for (const user of users) {
      await t.test(user.role, async t => {
        const browser = await headlessBrowser(t, executablePath)
        const page = await browser.newPage()
        await page.setViewportSize(PHONE)
        await signIn(page, app, user, '/')
        await page.waitForSelector('.tiles')
        if (user.role === 'staff') await page.screenshot({ path: join(shots, 'campaign-phone-home.png') })
        await checkLayout(t, page, 'home')
        t.notOk(await page.isVisible('nav#modules'), 'the navigation is folded')
        t.ok(await page.isVisible('a.signout'), 'Sign out is visible')
        const menu = page.getByRole('button', { name: 'Menu' })
        t.equal(await menu.getAttribute('aria-expanded'), 'false', 'the Menu button says the navigation is folded')
        t.equal(await menu.getAttribute('aria-controls'), 'modules')
        t.ok(await page.$('button.menu svg[data-icon="menu"]'), 'the Menu button is an SVG icon')

        await menu.click()
        await page.waitForSelector('nav#modules a[data-module]', { state: 'visible' })
        t.equal(await menu.getAttribute('aria-expanded'), 'true')
        const modules = await page.$$eval('nav#modules a[data-module]', links => links.map(a => a.getAttribute('data-module') as string))
        t.ok(modules.length > 0, `${modules.length} modules in the menu`)
        await checkLayout(t, page, 'menu open')
        if (user.role === 'staff') await page.screenshot({ path: join(shots, 'campaign-phone-menu.png') })
        await menu.click()
        await page.waitForSelector('nav#modules', { state: 'hidden' })
        t.equal(await menu.getAttribute('aria-expanded'), 'false', 'a second press folds it again')

        await menu.click()
        await page.click(`nav#modules a[data-module="${modules[0]}"]`)
        await page.waitForURL(new URL(`/${modules[0]}`, app).href)
        // The admin, who reaches every module, visits each page and its layout is checked; another role
        // reaches its first module through the menu and its last directly (which modules each role has
        // is the role matrix's and browser.test.ts's to check).
        for (const module of user.role === 'admin' ? modules : [modules[0], modules[modules.length - 1]]) {
          if (module !== modules[0]) await page.goto(new URL(`/${module}`, app).href)
          await page.waitForSelector('main h1')
          t.notOk(await page.isVisible('nav#modules'), `${module}: the menu is folded again`)
          if (user.role !== 'admin') continue
          await page.waitForLoadState('networkidle')
          await checkLayout(t, page, module)
        }

        if (user.role === 'staff') {
          await page.goto(new URL('/knowledge-base', app).href)
          await page.fill('input[name="query"]', 'affordable homes')
          await page.click('form.row button[type="submit"]')
          await page.waitForSelector('[data-testid="kb-results"] li')
          t.same(await page.$$eval('[data-testid="feedback"] button', buttons => buttons.map(b => [b.getAttribute('aria-label'), b.querySelector('svg')?.getAttribute('data-icon')])),
            [['Helpful', 'thumb-up'], ['Not helpful', 'thumb-down']], 'the thumbs are SVG icons with labels')
          await checkLayout(t, page, 'knowledge-base results')

          await page.goto(new URL('/fundraising', app).href)
          await page.waitForSelector('[data-testid="donors"] tbody tr')
          const donors = await page.evaluate<{ scrolls: boolean, amounts: number, broken: string[] }>(DONORS_TABLE)
          t.ok(donors.scrolls, 'the donors table, wider than the screen, scrolls inside its card')
          t.ok(donors.amounts >= 4, `${donors.amounts} amounts in the table`)
          t.same(donors.broken, [], 'no amount is broken across lines')
          await page.click('[data-testid="donors"] tbody button.link')
          await page.click('[data-testid="donor-gifts"] button:has-text("Correct or refund")')
          await page.waitForSelector('[data-testid="refund-form"]')
          await page.evaluate('for (const table of document.querySelectorAll("table")) table.scrollLeft = 0')
          await page.screenshot({ path: join(shots, 'campaign-phone-fundraising.png'), fullPage: true })
          await checkLayout(t, page, 'fundraising: a gift being corrected')

          await page.goto(new URL('/sentiment-monitor', app).href)
          await page.waitForSelector('[data-testid="sentiment-chart"] canvas')
          t.same(await page.$eval('[data-testid="sentiment-chart"]', el => [el.getAttribute('data-slots'), el.getAttribute('data-gaps')]), ['29', '25'], 'an hour a slot, the 25 without posts empty')
          // 29 slots over the plot's width: the line joins hours 0 and 1 (at 0.5/28) and would cross the gap's middle (14/28) if it spanned it.
          const joined = 0.5 / 28
          // Polled through page.evaluate: a string predicate of waitForFunction runs through eval in the page, which its CSP refuses.
          await pollUntil(async () => (await page.evaluate<number[]>(`${LINE_PIXELS}([${joined}])`))[0] > 0, { what: 'the sentiment line drawn' })
          const [withData, acrossGap] = await page.evaluate<number[]>(`${LINE_PIXELS}([${joined}, 0.5])`)
          t.ok(withData > 0, `the line is drawn between neighbouring hours (${withData} pixels)`)
          t.equal(acrossGap, 0, 'and not across the hours without posts')
          await checkLayout(t, page, 'sentiment chart')

          await page.goto(new URL('/call-intelligence', app).href)
          await page.waitForSelector('[data-testid="call-trends-chart"]')
          t.same(await page.$$eval('[data-testid="call-trends-chart"] g[data-bucket]', gs => gs.map(g => g.getAttribute('data-calls'))), ['1', '0', '0', '0', '0', '1'], 'days without calls are empty columns')
          await checkLayout(t, page, 'call trends')
        }

        const box = await page.locator('a.signout').boundingBox()
        t.ok(box !== null && box.x >= 0 && box.x + box.width <= PHONE.width && box.y >= 0, 'Sign out lies on the screen')
        await page.click('a.signout')
        await page.waitForSelector('button[name="logout"]')
        await page.click('button[name="logout"]')
        await page.waitForSelector('form input[name="username"]')
        t.notOk((await browser.cookies(app.href)).some(c => c.name === 'campaign_session'), 'signed out')
      })
    }

    await t.test('desktop: the side navigation beside the page, no Menu button', async t => {
      const browser = await headlessBrowser(t, executablePath)
      const page = await browser.newPage()
      await signIn(page, app, users.find(u => u.role === 'staff') as DevUser, '/')
      await page.waitForSelector('.tiles')
      t.notOk(await page.isVisible('button.menu'), 'no Menu button')
      t.ok(await page.isVisible('nav#modules a[data-module]'), 'the modules are listed')
      const nav = await page.$eval('nav#modules', el => { const box = el.getBoundingClientRect(); return { left: box.left, width: box.width } })
      const main = await page.$eval('main', el => el.getBoundingClientRect().left)
      t.same(nav, { left: 0, width: 208 }, 'a 13rem column on the left')
      t.equal(main, 208, 'the page beside it')
      await checkLayout(t, page, 'desktop home')
    })
    t.comment(`screenshots: ${shots}`)
  })
}
