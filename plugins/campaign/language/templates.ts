// Wording of the writing modules' extractive composition (calls to action, greetings, questions,
// answers to objections): JSON files in language/templates/, so the campaign can reword them without
// touching code ({{name}} placeholders); read once at start and checked against the module's schema.
import { join } from 'node:path'
import { besideSource } from '../../../kernel/index.js'
import type { Static, TSchema } from '@sinclair/typebox'
import { readCheckedFile } from '../data-files.js'

export const TEMPLATES_DIR = besideSource(import.meta.url, 'templates')

/** `templates/<name>.json`, or another file. */
export function loadTemplates<S extends TSchema> (name: string, schema: S, file = join(TEMPLATES_DIR, `${name}.json`)): Static<S> {
  return readCheckedFile(file, schema)
}
