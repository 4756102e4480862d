// Input pieces of the stance pages (coalition detector, faction mapper, local issues): statements typed
// one per line as "Name: statement", grouped by name in order of appearance; and the post-stream range.
import { Field, formValue } from './ui.js'

export interface Speaker { name: string, statements: string[] }

/** "Name: statement" lines grouped by name; `problem` names the first line without a name. */
export function parseSpeakers (text: string): { speakers: Speaker[], problem?: string } {
  const byName = new Map<string, string[]>()
  const lines = text.split('\n')
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue
    const colon = line.indexOf(':')
    const name = colon < 0 ? '' : line.slice(0, colon).trim()
    const statement = colon < 0 ? '' : line.slice(colon + 1).trim()
    if (name === '' || statement === '') return { speakers: [], problem: `line ${i + 1} is not "Name: statement"` }
    byName.set(name, [...(byName.get(name) ?? []), statement])
  }
  return { speakers: [...byName].map(([name, statements]) => ({ name, statements })) }
}

/** Speakers back as "Name: statement" lines. */
export const speakerLines = (speakers: readonly Speaker[]): string => speakers.flatMap(s => s.statements.map(text => `${s.name}: ${text}`)).join('\n')

/** From, to (dates) and source fields of the post stream. */
export function RangeFields () {
  return (
    <div class="grid">
      <Field label="Posts from"><input name="from" type="date" /></Field>
      <Field label="Posts to"><input name="to" type="date" /></Field>
      <Field label="Source"><input name="source" placeholder="any" /></Field>
    </div>
  )
}

/** The range fields filled in, as arguments (`to` covers its whole day). */
export function rangeArgs (form: HTMLFormElement): { from?: string, to?: string, source?: string } {
  const from = formValue(form, 'from')
  const to = formValue(form, 'to')
  const source = formValue(form, 'source')
  return { ...(from !== '' ? { from } : {}), ...(to !== '' ? { to: `${to}T23:59:59Z` } : {}), ...(source !== '' ? { source } : {}) }
}
