// The whole login as a person does it, in headless Chromium against the development IDP: sign in as
// each role, see that role's modules, use one, sign out. One screenshot of a signed-in page is kept.
import t from 'tap'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import { builtUi, signIn } from '../../support/campaign-browser.js'
import { campaignKernel, scriptedLogin } from '../../support/campaign.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'

const NAVIGATION: Record<string, string[]> = {
  admin: ['knowledge-base', 'people', 'volunteers', 'events', 'canvassing', 'fundraising', 'meetings', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'disinfo-warning', 'campaign-copy', 'sending', 'policy-chatbot', 'multilingual', 'empathy-simulator', 'question-anticipation', 'candidate-briefings', 'coaching-debate', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'regulatory-monitor', 'compliance', 'accountability', 'admin'],
  staff: ['knowledge-base', 'people', 'volunteers', 'events', 'canvassing', 'fundraising', 'meetings', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'disinfo-warning', 'campaign-copy', 'sending', 'policy-chatbot', 'multilingual', 'empathy-simulator', 'question-anticipation', 'candidate-briefings', 'coaching-debate', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'regulatory-monitor', 'compliance', 'accountability'],
  volunteer: ['knowledge-base', 'volunteers', 'events', 'canvassing', 'local-issues', 'call-intelligence', 'policy-chatbot', 'multilingual'],
  readonly: ['knowledge-base', 'people', 'volunteers', 'events', 'fundraising', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'campaign-copy', 'sending', 'empathy-simulator', 'question-anticipation', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'accountability']
}

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('each role signs in, sees its modules, uses one, and signs out', async t => {
    await builtUi()
    const kernel = await campaignKernel(t)
    const app = kernel.url('app')
    const users = kernel.service('campaign').devIdp?.users ?? []
    const staff = await scriptedLogin(app, users.find(u => u.role === 'staff') as DevUser)
    await callServerFunction('kb-ingest', { title: 'Housing plan', text: 'We will build affordable homes near every transit stop.' }, { baseUrl: app, headers: { cookie: staff.cookie } })

    for (const user of users) {
      await t.test(user.role, async t => {
        const browser = await headlessBrowser(t, executablePath)
        const page = await browser.newPage()
        await signIn(page, app, user)
        t.equal(new URL(page.url()).pathname, '/knowledge-base', 'back at the page asked for')
        t.equal(await page.textContent('[data-testid="role"]'), user.role, 'the role in the header')
        t.same(await page.$$eval('nav a[data-module]', links => links.map(a => a.getAttribute('data-module'))), NAVIGATION[user.role], 'the modules of the role')

        await page.fill('input[name="query"]', 'affordable homes')
        await page.click('form.row button[type="submit"]')
        await page.waitForSelector('[data-testid="kb-results"] li')
        t.match(await page.textContent('[data-testid="kb-results"]'), /We will build affordable homes[\s\S]*\[1\] Housing plan, passage 1/, 'kb-query over CBOR from the page')
        t.equal(await page.$('textarea[name="text"]') !== null, ['admin', 'staff'].includes(user.role), 'the add form only for roles that may add')

        if (user.role === 'admin') {
          await page.click('nav a[data-module="admin"]')
          await page.waitForSelector('[data-testid="health"]')
          t.match(await page.textContent('[data-testid="health"]'), /Statusok/, 'admin-health on the admin page')
          // Kept after the run, for a person to look at.
          const shot = join(mkdtempSync(join(tmpdir(), 'berth-campaign-screenshot-')), 'admin.png')
          await page.screenshot({ path: shot, fullPage: true })
          const png = readFileSync(shot)
          t.ok(png.length > 1000, `a screenshot of ${png.length} bytes`)
          t.same([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'it is a PNG')
          t.comment(`screenshot: ${shot}`)
        } else {
          await page.goto(new URL('/admin', app).href)
          await page.waitForSelector('main [role="alert"]')
          t.match(await page.textContent('main [role="alert"]'), /may not use Admin/, 'the admin page refuses other roles')
        }

        await page.click('a.signout')
        await page.waitForSelector('button[name="logout"]')
        await page.click('button[name="logout"]')
        await page.waitForSelector('form input[name="username"]')
        t.match(new URL(page.url()).pathname, /^\/realms\/campaign\/login\//, 'signed out: the next visit asks for the password')
        const cookies = await browser.cookies(app.href)
        t.notOk(cookies.some(c => c.name === 'campaign_session'), 'no session cookie left')
      })
    }
  })
}
