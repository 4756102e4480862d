// The analysis modules' pages in headless Chromium: a staff member signs in once, then on each page
// runs one of its functions and sees the result; a screenshot of each page is kept in a temp folder.
import t from 'tap'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/campaign/dev-idp/users.js'
import { builtUi, signIn } from '../../support/campaign-browser.js'
import { scriptedLogin } from '../../support/campaign.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { testKernel } from '../../support/kernel.js'

const hourAgo = (h: number, minute = 0): string => new Date(Date.now() - h * 3_600_000 + minute * 60_000).toISOString()

/** Each page: what to do on it, and the text its result must show. */
const PAGES: Array<{ module: string, use: (page: Page) => Promise<void>, result: string, expect: RegExp }> = [
  {
    module: 'sentiment-monitor',
    use: async page => { await page.click('button[name="detect"]') },
    result: '[data-testid="spikes"] li',
    expect: /negative, z = -\d/
  },
  {
    module: 'narrative-contagion',
    use: async page => { await page.click('[data-testid="narratives"] tbody tr button') },
    result: '[data-testid="virality"]',
    expect: /Level(high|medium|low)/
  }
]

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('a staff member uses each analysis page', async t => {
    await builtUi()
    const kernel = await testKernel(t, { plugins: [campaign] })
    const app = kernel.url('app')
    const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
    const { cookie } = await scriptedLogin(app, staff)
    const calm = Array.from({ length: 80 }, (_, i) => ({ text: 'Nice morning at the market.', source: ['a', 'b'][i % 2], author: `p${i}`, posted_at: hourAgo(22 - Math.floor(i / 4), i % 4) }))
    const angry = Array.from({ length: 6 }, (_, i) => ({ text: `The bridge toll is a terrible disgusting betrayal #${i}`, source: ['a', 'b', 'c'][i % 3], author: `q${i}`, posted_at: hourAgo(1, i) }))
    await callServerFunction('ingest-posts', { posts: [...calm, ...angry] }, { baseUrl: app, headers: { cookie } })

    const browser = await headlessBrowser(t, executablePath)
    const page = await browser.newPage()
    await signIn(page, app, staff, '/')
    const shots = mkdtempSync(join(tmpdir(), 'berth-campaign-modules-'))
    for (const { module, use, result, expect } of PAGES) {
      await page.click(`nav a[data-module="${module}"]`)
      await page.waitForURL(new URL(`/${module}`, app).href)
      await use(page)
      await page.waitForSelector(result)
      t.match(await page.textContent(result), expect, `${module}: the result on the page`)
      await page.screenshot({ path: join(shots, `${module}.png`), fullPage: true })
    }
    t.comment(`screenshots: ${shots}`)
  })
}
