// Helpers of the public pages' browser tests: a phone-sized page that collects the policy violations
// Chromium reports, the colour the pages' hashed style sheet gives their button (so a test sees that
// the sheet applies), the focus order by Tab, and a phone-sized page in a second browser that bypasses
// the pages' policy, so that axe-core may be injected into pages that forbid every script.
import type { BrowserContext, Page } from 'playwright-core'
import { headlessBrowser } from './chromium.js'

export const PHONE = { width: 390, height: 844 }
/** The button's background under the public pages' style sheet (#0b5394). */
export const BUTTON_COLOUR = 'rgb(11, 83, 148)'

/** A new page at 390 px, with the Content Security Policy violations the browser reports. */
export async function phonePage (browser: BrowserContext): Promise<{ page: Page, violations: string[] }> {
  const page = await browser.newPage()
  await page.setViewportSize(PHONE)
  const violations: string[] = []
  page.on('console', message => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
  return { page, violations }
}

/** The submit button's background colour. */
export async function buttonColour (page: Page): Promise<unknown> {
  return await page.evaluate("getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor")
}

/** What `presses` Tabs from `from` focus in turn: each element's id, or its tag name without one. */
export async function tabOrder (page: Page, from: string, presses: number): Promise<string[]> {
  const order: string[] = []
  await page.focus(from)
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press('Tab')
    order.push(await page.evaluate('document.activeElement.id || document.activeElement.tagName.toLowerCase()') as string)
  }
  return order
}

/** A page at 390 px in a new browser that bypasses Content Security Policies (for axe-core's injection). */
export async function axePhonePage (t: Parameters<typeof headlessBrowser>[0], executablePath: string): Promise<Page> {
  const page = await (await headlessBrowser(t, executablePath, { bypassCSP: true })).newPage()
  await page.setViewportSize(PHONE)
  return page
}
