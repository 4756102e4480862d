// Prompt templates of the generative provider: Markdown files in a module's prompts/ folder with a
// "## System" and a "## User" section (HTML comments dropped) and {{name}} placeholders, read once at start.
import { readFileSync } from 'node:fs'
import { besideSource } from '../../../kernel/index.js'
import type { ChatMessage } from './generator.js'

export interface PromptTemplate { name: string, system: string, user: string }

export function parsePrompt (name: string, text: string): PromptTemplate {
  const parts = text.replace(/<!--[\s\S]*?-->/g, '').split(/^##\s+(System|User)\s*$/im)
  const section = (heading: string): string => {
    const at = parts.findIndex((p, i) => i % 2 === 1 && p.toLowerCase() === heading)
    return at === -1 ? '' : parts[at + 1].trim()
  }
  const template = { name, system: section('system'), user: section('user') }
  if (template.system === '' || template.user === '') throw new Error(`the ${name} prompt needs a "## System" and a "## User" section`)
  return template
}

/** `prompts/<name>.md` in the folder of the module at `moduleUrl` (its `import.meta.url`). */
export const loadPrompt = (moduleUrl: string, name: string): PromptTemplate => parsePrompt(name, readFileSync(besideSource(moduleUrl, 'prompts', `${name}.md`), 'utf8'))

/** `text` with every {{key}} of `values` filled in (unknown keys stay as written). */
export const fillTemplate = (text: string, values: Readonly<Record<string, string>>): string =>
  text.replace(/\{\{(\w+)\}\}/g, (all, key: string) => values[key] ?? all)

/** The system and user messages with every {{key}} of `values` filled in (unknown keys stay as written). */
export function promptMessages (template: PromptTemplate, values: Readonly<Record<string, string>>): ChatMessage[] {
  return [{ role: 'system', content: fillTemplate(template.system, values) }, { role: 'user', content: fillTemplate(template.user, values) }]
}

/**
 * A provider's answer read back as labelled sections ("REBUTTAL: … QUESTION: …"), by label, in any
 * case; undefined when a label is missing or its section is empty.
 */
export function labelledSections<L extends string> (answer: string, labels: readonly L[]): Record<L, string> | undefined {
  const found = [...answer.matchAll(new RegExp(`^\\s*(${labels.join('|')})\\s*:`, 'gim'))]
  const sections: Partial<Record<L, string>> = {}
  found.forEach((match, i) => {
    const label = labels.find(l => l.toLowerCase() === match[1].toLowerCase()) as L
    sections[label] = answer.slice((match.index) + match[0].length, found[i + 1]?.index ?? answer.length).trim()
  })
  return labels.every(l => (sections[l] ?? '') !== '') ? sections as Record<L, string> : undefined
}
