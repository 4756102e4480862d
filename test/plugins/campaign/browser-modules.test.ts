// Every module page in headless Chromium: a staff member signs in once, sees the grouped home page,
// then on each page runs one of its functions and sees the result. Screenshots of the home page and of
// each page go to BERTH_SCREENSHOTS (docs/screenshots holds the ones published), or a temp folder.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import { builtUi, signIn } from '../../support/campaign-browser.js'
import { campaignKernel, scriptedLogin } from '../../support/campaign.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { tempDir } from '../../support/tmp.js'

const hourAgo = (h: number, minute = 0): string => new Date(Date.now() - h * 3_600_000 + minute * 60_000).toISOString()

const BILL = `SECTION 3. Disclosure.
(a) Each political committee shall disclose every contribution over $200 to the Elections Board.
(b) The treasurer must file a contribution report within 30 days after the election.

SECTION 4. Foreign money.
A committee may not accept a contribution from a foreign national.

SECTION 5. Penalties.
A committee that violates this Act shall be liable to a fine of up to $10,000.`

/** Fill the page's form with its example and submit it. */
async function example (page: Page): Promise<void> {
  await page.click('button:has-text("Load an example")')
  await page.click('main button[type="submit"]')
}

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
  },
  {
    module: 'call-intelligence',
    use: async page => {
      await page.fill('textarea[name="transcript"]', 'Volunteer: Hi, can we count on your vote?\nVoter: I\'ll vote for her, count me in! The parks are great.')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="call-outcome"]',
    expect: /supporter/
  },
  {
    module: 'accountability',
    use: async page => {
      await page.fill('textarea[name="text"]', 'Last year we built parks. We will hire 200 teachers within 100 days. The City Council pledges to publish the budget next year. Did we fix the roads?')
      await page.fill('input[name="actor"]', 'Maria Lopez')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="extracted-commitments"]',
    expect: /2 commitments/
  },
  {
    module: 'meetings',
    use: async page => {
      await page.fill('input[name="title"]', 'Field team')
      await page.fill('textarea[name="text"]', 'Ana: We agreed to canvass Elm Street first.\nAna: Ben will send the flyer by Friday.\nAction: Carla to book the hall\nBen: Who has the keys?')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="meeting-actions"]',
    expect: /Ben[\s\S]*send the flyer/
  },
  {
    module: 'media-monitor',
    use: async page => {
      await page.fill('input[name="title"]', 'Mayor Ana Silva opens the new Riverside bridge')
      await page.fill('input[name="outlet"]', 'Harbor Herald')
      await page.fill('textarea[name="text"]', 'Mayor Ana Silva opened the new Riverside bridge on Saturday. Residents celebrated the beautiful crossing and praised the smooth traffic. The bridge is a great success and a proud moment for the city.')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="article-tone"]',
    expect: /favourable/
  },
  {
    module: 'disinfo-warning',
    use: async page => {
      await page.fill('textarea[name="text"]', 'SHARE BEFORE IT IS DELETED!!! They don\'t want you to know the truth. Voting machines were hacked in every county! 87% of ballots were fake!')
      await page.click('form.stack button[type="submit"]')
      await page.waitForSelector('[data-testid="disinfo-level"]')
      await page.click('[data-testid="disinfo-result"] form button[type="submit"]')
    },
    result: '[data-testid="counter-short"]',
    expect: /The claim that “Voting machines were hacked in every county” is not supported: .*\[1\]/
  },
  {
    module: 'regulatory-monitor',
    use: async page => {
      await page.fill('input[name="title"]', 'Campaign Transparency Act')
      await page.fill('textarea[name="text"]', BILL)
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="regulation-counts"]',
    expect: /2 obligation\(s\), 1 prohibition\(s\), 0 permission\(s\), 1 deadline\(s\), 1 penalty clause\(s\)/
  },
  { module: 'coalition-detector', use: example, result: '[data-testid="tensions"] li', expect: /minimum wage/ },
  { module: 'faction-mapper', use: example, result: '[data-testid="consensus"]', expect: /library: 100 % of 6 support/ },
  { module: 'local-issues', use: example, result: '[data-testid="issues"] tr[data-issue]', expect: /housing/i },
  {
    module: 'policy-chatbot',
    use: async page => {
      await page.fill('input[name="title"]', 'Housing for everyone')
      await page.fill('textarea[name="text"]', 'We will build 5,000 affordable homes near transit stations by 2030.')
      await page.click('button:has-text("Add to the policy documents")')
      await page.waitForSelector('[data-testid="policy-ingested"]')
      await page.fill('textarea[name="message"]', 'How many affordable homes will you build?')
      await page.click('button:has-text("Ask")')
    },
    result: '[data-testid="policy-answer"]',
    expect: /We will build 5,000 affordable homes near transit stations by 2030\. \[1\]/
  },
  {
    module: 'coaching-debate',
    use: async page => {
      await page.fill('input[name="topic"]', 'How will you keep rent affordable for families?')
      await page.fill('textarea[name="message"]', 'Um, I think maybe we could, like, try to do something about housing, you know.')
      await page.click('button:has-text("Send")')
    },
    result: '[data-testid="coaching-feedback"]',
    expect: /Score 25\/100/
  },
  {
    module: 'empathy-simulator',
    use: async page => {
      await page.fill('textarea[name="message"]', 'We will raise the minimum wage to $20 an hour and add new permits for every shop.')
      await page.click('button:has-text("Simulate")')
    },
    result: '[data-testid="reactions"] [data-persona="small-business-owner"]',
    expect: /opposed[\s\S]*Any rise in minimum wage/
  },
  {
    module: 'campaign-copy',
    use: async page => {
      await page.fill('input[name="topic"]', 'voting machines')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="copy-text"]',
    expect: /^Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board\. \[1\] Reply YES/
  },
  {
    module: 'canvassing',
    use: async page => {
      await page.fill('input[name="issues"]', 'voting machines')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="script-issues"]',
    expect: /voting machines[\s\S]*Voting machines were not hacked in any county.* \[1\]/
  },
  {
    module: 'candidate-briefings',
    use: async page => {
      await page.fill('input[name="subject"]', 'bridge toll')
      await page.click('form.stack button[type="submit"]')
    },
    result: '[data-testid="briefing-questions"]',
    expect: /Most posts about bridge toll are critical \(6 of 6\)/
  },
  { module: 'opposition-research', use: example, result: '[data-testid="opposition-contradictions"]', expect: /bridge toll[\s\S]*strength 0\.75/ },
  {
    module: 'multilingual',
    use: async page => {
      await page.fill('textarea[name="text"]', 'Vote for Maria Lopez on Election Day! Find your polling place.')
      await page.selectOption('select[name="target_language"]', 'es')
      await page.click('button:has-text("Translate")')
    },
    result: '[data-testid="translation"]',
    expect: /Vote por Maria Lopez el día de las elecciones! Encuentre su centro de votación\./
  },
  {
    module: 'question-anticipation',
    use: async page => {
      await page.fill('input[name="topic"]', 'bridge toll')
      await page.click('button:has-text("Anticipate")')
    },
    result: '[data-testid="questions"]',
    expect: /What do you say to people who say “The bridge toll is a terrible disgusting betrayal/
  },
  { module: 'policy-diff', use: example, result: '[data-testid="diff-summary"]', expect: /changes 3 of the 5 clauses of \[A\] \(3 in substance\)/ },
  { module: 'compliance', use: example, result: '[data-testid="compliance-findings"]', expect: /GOVERNMENT-ENDORSEMENT/ }
]

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('a staff member uses each module page', async t => {
    await builtUi()
    const kernel = await campaignKernel(t)
    const app = kernel.url('app')
    const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
    const { cookie } = await scriptedLogin(app, staff)
    const calm = Array.from({ length: 80 }, (_, i) => ({ text: 'Nice morning at the market.', source: ['a', 'b'][i % 2], author: `p${i}`, posted_at: hourAgo(22 - Math.floor(i / 4), i % 4) }))
    const angry = Array.from({ length: 6 }, (_, i) => ({ text: `The bridge toll is a terrible disgusting betrayal #${i}`, source: ['a', 'b', 'c'][i % 3], author: `q${i}`, posted_at: hourAgo(1, i) }))
    await callServerFunction('ingest-posts', { posts: [...calm, ...angry] }, { baseUrl: app, headers: { cookie } })
    await callServerFunction('kb-ingest', { title: 'State audit', text: 'Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board.' }, { baseUrl: app, headers: { cookie } })

    const browser = await headlessBrowser(t, executablePath)
    const page = await browser.newPage()
    await signIn(page, app, staff, '/')
    const shots = process.env.BERTH_SCREENSHOTS ?? tempDir(t, 'berth-campaign-shots-')
    mkdirSync(shots, { recursive: true })
    await page.waitForSelector('.tiles')
    t.same(await page.$$eval('main h2.group-heading', headings => headings.map(h => h.textContent)),
      ['Organise', 'Listen', 'Message', 'Candidate', 'Coalition', 'Policy and compliance'], 'the home page groups the modules')
    await page.screenshot({ path: join(shots, 'campaign-home.png'), fullPage: true })
    for (const { module, use, result, expect } of PAGES) {
      await page.click(`nav a[data-module="${module}"]`)
      await page.waitForURL(new URL(`/${module}`, app).href)
      await use(page)
      await page.waitForSelector(result)
      t.match(await page.textContent(result), expect, `${module}: the result on the page`)
      await page.screenshot({ path: join(shots, `campaign-${module}.png`), fullPage: true })
    }
    t.comment(`screenshots: ${shots}`)
  })
}
