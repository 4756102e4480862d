// The campaign UI in a browser: building it when a test runs before `npm run build`, and signing in
// through the development IDP's form.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import type { DevUser } from '../../plugins/dev-idp/users.js'
import { UI_BUILD_DIR } from '../../plugins/campaign/ui-routes.js'

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
