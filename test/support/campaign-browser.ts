// The campaign UI in a browser: building it when a test runs before `npm run build`, signing in and
// out through the development IDP's form, the two sizes pages are tried at, and reading pages.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import type { DevUser } from '../../plugins/dev-idp/users.js'
import { UI_BUILD_DIR } from '../../plugins/campaign/ui-routes.js'
import { callServerFunction } from '../../plugins/campaign/client.js'
import { campaignKernel, scriptedLogin } from './campaign.js'
import { headlessBrowser } from './chromium.js'

/** The UI is built by `npm run build`; a single test file run after a fresh clone builds it here. */
export async function builtUi (): Promise<void> {
  if (existsSync(join(UI_BUILD_DIR, 'index.html'))) return
  await promisify(execFile)('npm', ['run', 'build:ui'], { cwd: join(UI_BUILD_DIR, '..', '..'), timeout: 120_000 })
}

/** Open `path` (default the knowledge base), sign in as `user` on the IDP's form, wait for the app. */
export async function signIn (page: Page, app: URL, user: DevUser, path = '/knowledge-base'): Promise<void> {
  await page.goto(new URL(path, app).href)
  await page.waitForSelector('form input[name="username"]')
  await page.fill('input[name="username"]', user.username)
  await page.fill('input[name="password"]', user.password)
  await page.click('button[type="submit"]')
  await page.waitForSelector('[data-testid="role"]')
}

/** The sizes the organising pages are tried at: a desktop and a phone. */
export const SIZES = [{ name: 'desktop', width: 1280, height: 900 }, { name: 'phone', width: 390, height: 844 }] as const

/** Sign out through the app and the IDP's confirmation, back to the sign-in form. */
export async function signOut (page: Page): Promise<void> {
  const menu = page.locator('button.menu')
  if (await menu.isVisible()) await menu.click()
  await page.click('a.signout')
  await page.waitForSelector('button[name="logout"]')
  await page.click('button[name="logout"]')
  await page.waitForSelector('form input[name="username"]')
}

/** Assert that the page does not scroll sideways. */
export async function noSidewaysScroll (t: { ok(value: unknown, message: string): void }, page: Page, where: string): Promise<void> {
  const [width, scroll] = await page.evaluate('[innerWidth, document.documentElement.scrollWidth]') as number[]
  t.ok(scroll <= width, `${where}: no sideways scrolling (${scroll} ≤ ${width})`)
}

/** The cells of a table's body rows, as text. */
export async function rowsOf (page: Page, table: string): Promise<string[][]> {
  return await page.$$eval(`${table} tbody tr`, rows => rows.map(row => [...row.querySelectorAll('td')].map(td => (td.textContent ?? '').trim())))
}

/** A card by its heading. */
export const card = (page: Page, title: string): Locator => page.locator('section.card', { has: page.locator('h2', { hasText: title }) })

export interface AppInBrowser {
  app: URL
  /** The development IDP's user of a role. */
  user(role: string): DevUser
  /** A server function called as staff, from Node. */
  call<T>(name: string, args: object): Promise<T>
  browser: BrowserContext
  page: Page
}

/** The UI built, a campaign kernel with more `[campaign]` settings from `config`, staff signed in from Node, and one page of a headless Chromium. */
export async function appInBrowser (t: { teardown(fn: () => void | Promise<void>): void }, executablePath: string, config: Record<string, unknown> = {}): Promise<AppInBrowser> {
  await builtUi()
  const kernel = await campaignKernel(t, config)
  const app = kernel.url('app')
  const users = kernel.service('campaign').devIdp?.users ?? []
  const user = (role: string): DevUser => users.find(u => u.role === role) as DevUser
  const { cookie } = await scriptedLogin(app, user('staff'))
  const call = async <T>(name: string, args: object): Promise<T> => await callServerFunction<T>(name, args, { baseUrl: app, headers: { cookie } })
  const browser = await headlessBrowser(t, executablePath)
  return { app, user, call, browser, page: await browser.newPage() }
}

/** Assert that `user` signed in has modules in the navigation, but not `module`; then sign out. */
export async function moduleHidden (t: { ok(value: unknown, message: string): void, equal(a: unknown, b: unknown, message: string): void }, page: Page, app: URL, user: DevUser, module: string): Promise<void> {
  await signIn(page, app, user, '/')
  t.ok(await page.locator('nav#modules a[data-module]').count() > 0, `a ${user.role} has modules`)
  t.equal(await page.locator(`nav#modules a[data-module="${module}"]`).count(), 0, `but not ${module}`)
  await signOut(page)
}
