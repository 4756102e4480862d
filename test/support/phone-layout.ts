// A page's layout on a phone, checked in the browser: it does not scroll sideways, and every visible
// control (every <details> opened) can be scrolled onto the screen and is not covered there. Shared by
// the campaign app's and the telemetry dashboard's phone tests (Chromium at 390 × 844).
import type { Test } from 'tap'
import type { Page } from 'playwright-core'

/** The phone the layouts are checked at. */
export const PHONE = { width: 390, height: 844 }

/**
 * Run in the page: its width, its scrolling width, and the visible controls (every <details> opened) that
 * cannot be brought onto the screen: each is scrolled into view (its page and any box around it that
 * scrolls) and must then lie inside the viewport with its own centre on top, not under another element.
 */
const LAYOUT = `(() => {
  for (const details of document.querySelectorAll('details')) details.open = true
  const controls = [...document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary')]
    .filter(el => el.checkVisibility({ visibilityProperty: true }))
  const unreachable = controls.filter(el => {
    el.scrollIntoView({ block: 'center', inline: 'center' })
    const box = el.getBoundingClientRect()
    const inside = box.left >= -0.5 && box.right <= innerWidth + 0.5 && box.top >= -0.5 && box.bottom <= innerHeight + 0.5
    const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)
    return !inside || top === null || !(el === top || el.contains(top))
  }).map(el => el.outerHTML.slice(0, 120))
  scrollTo(0, 0)
  return { width: innerWidth, scroll: document.documentElement.scrollWidth, controls: controls.length, unreachable }
})()`

/** Assert `page` (named `where` in the messages) neither scrolls sideways nor hides a control. */
export async function checkPhoneLayout (t: Test, page: Page, where: string): Promise<void> {
  const { width, scroll, controls, unreachable } = await page.evaluate<{ width: number, scroll: number, controls: number, unreachable: string[] }>(LAYOUT)
  t.ok(scroll <= width, `${where}: no horizontal overflow (scrollWidth ${scroll} ≤ ${width})`)
  t.same(unreachable, [], `${where}: each of ${controls} controls can be scrolled onto the screen, uncovered`)
}
