// axe-core in a Playwright page, for the accessibility checks of the browser tests: the WCAG 2.1 A
// and AA rules and axe's best practices. It is injected with addScriptTag, which a page whose policy
// forbids scripts refuses unless its browser bypasses the policy (headlessBrowser's bypassCSP).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation { id: string, impact: string, nodes: Array<{ target: string[] }> }

/** What axe finds wrong in the page as it is now. */
export async function axeViolations (page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE_SOURCE })
  const run = "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })" +
    '.then(result => result.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => ({ target: n.target })) })))'
  return await page.evaluate(run) as AxeViolation[]
}
