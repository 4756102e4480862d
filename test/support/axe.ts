// axe-core in a Playwright page, for the accessibility checks of the browser tests: the WCAG 2.1 A
// and AA rules and axe's best practices. It is injected with addScriptTag, which a page whose policy
// forbids scripts refuses unless its browser bypasses the policy (headlessBrowser's bypassCSP).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import type { Test } from 'tap'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation { id: string, impact: string, nodes: Array<{ target: string[] }> }

/** What axe finds wrong in the page as it is now. */
export async function axeViolations (page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE_SOURCE })
  const run = "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })" +
    '.then(result => result.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => ({ target: n.target })) })))'
  return await page.evaluate(run) as AxeViolation[]
}

/** A public form sent once with one field wrong and once put right, axe run on each answer. */
export interface FormRun {
  /** Field labels (exact) and the values typed. */
  fields: Record<string, string>
  /** The field made wrong, its input's id, the message expected, and the value that puts it right. */
  wrong: { label: string, id: string, value: string, message: string, fixed: string }
  /** The submit button's name, and a selector on the answer once accepted. */
  button: string
  done: string
}

/** Send the form with `run.wrong` wrong: the messages shown and tied to the field, axe finds nothing; then put right and sent, axe finds nothing on the answer. */
export async function axeFormRun (t: Test, page: Page, run: FormRun): Promise<void> {
  for (const [label, value] of Object.entries(run.fields)) await page.getByLabel(label, { exact: true }).fill(value)
  await page.getByLabel(run.wrong.label, { exact: true }).fill(run.wrong.value)
  await page.getByRole('button', { name: run.button }).click()
  await page.waitForSelector('.errors')
  t.match(await page.textContent('.errors'), run.wrong.message)
  t.equal(await page.getAttribute(`#${run.wrong.id}`, 'aria-invalid'), 'true')
  t.same(await axeViolations(page), [], 'the form with its messages')
  await page.getByLabel(run.wrong.label, { exact: true }).fill(run.wrong.fixed)
  await page.getByRole('button', { name: run.button }).click()
  await page.waitForSelector(run.done)
  t.same(await axeViolations(page), [], 'the answer')
}
