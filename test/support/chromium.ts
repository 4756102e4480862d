// Headless Chromium for tests: Debian's `chromium` package driven by npm `playwright-core`, each
// browser with a fresh profile directory that is removed when the test ends.
import { existsSync } from 'node:fs'
import { chromium, type BrowserContext } from 'playwright-core'
import { ensureDebianPackages, Unavailable } from './component.js'
import { tempDir } from './tmp.js'

export const CHROMIUM_PATH = '/usr/bin/chromium'

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** Install Debian's chromium when missing (as root); throws Unavailable when it cannot be had. */
export async function chromiumBinary (): Promise<string> {
  await ensureDebianPackages(['chromium'])
  if (!existsSync(CHROMIUM_PATH)) throw new Unavailable(`${CHROMIUM_PATH} is missing after installing chromium`)
  return CHROMIUM_PATH
}

/**
 * A headless browser (one context) with a fresh --user-data-dir, closed at the end of the test. Use it
 * inside `requireComponent(t, 'chromium', chromiumBinary)`. `bypassCSP` lets a test inject a script
 * (an accessibility checker) into pages whose policy forbids it.
 */
export async function headlessBrowser (t: Teardown, executablePath: string, { bypassCSP = false }: { bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  const profile = tempDir(t, 'berth-chromium-')
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: FLAGS,
    bypassCSP,
    viewport: { width: 1200, height: 800 }
  })
  t.teardown(async () => { await context.close() })
  return context
}
