// Prompt templates of the generative provider: Markdown files in language/prompts/ with a "## System"
// and a "## User" section (HTML comments dropped) and {{name}} placeholders, read once at start.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../../../kernel/paths.js'
import type { ChatMessage } from './generator.js'

export interface PromptTemplate { name: string, system: string, user: string }

export const PROMPTS_DIR = join(PACKAGE_ROOT, 'plugins', 'campaign', 'language', 'prompts')

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

/** `prompts/<name>.md`, or another file. */
export const loadPrompt = (name: string, file = join(PROMPTS_DIR, `${name}.md`)): PromptTemplate => parsePrompt(name, readFileSync(file, 'utf8'))

/** The system and user messages with every {{key}} of `values` filled in (unknown keys stay as written). */
export function promptMessages (template: PromptTemplate, values: Readonly<Record<string, string>>): ChatMessage[] {
  const fill = (text: string): string => text.replace(/\{\{(\w+)\}\}/g, (all, key: string) => values[key] ?? all)
  return [{ role: 'system', content: fill(template.system) }, { role: 'user', content: fill(template.user) }]
}
