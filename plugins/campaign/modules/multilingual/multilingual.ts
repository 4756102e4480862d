// Multilingual: translate-content translates campaign content with the generative provider (prompt in
// modules/multilingual/prompts/translate-content.md) or, without one, as far as the campaign glossary goes, saying
// plainly what was and was not translated. Stores nothing.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageGuess, generated, loadPrompt, promptMessages, checkText, contentId, TextArg, type ModuleKit } from '../../module-kit.js'
import { Glossary, UNTRANSLATED_CLOSE, UNTRANSLATED_OPEN, type GlossaryTranslation, type Segment } from './glossary.js'
import { manifest } from './manifest.js'

/** Longest text translated at once: campaign content, not a book (a generated translation must fit the provider's answer). */
export const MAX_TRANSLATE_CHARS = 20_000

const LanguageCode = (description: string): ReturnType<typeof Type.String> => Type.String({ pattern: '^[a-z]{2}$', description })

const TranslateArgs = Type.Object({
  text: TextArg('the post, flyer, e-mail or script to translate'),
  target_language: LanguageCode('ISO 639-1 code of the language to translate into, e.g. "es"'),
  source_language: Type.Optional(LanguageCode('ISO 639-1 code of the text\'s language; detected when absent'))
}, { additionalProperties: false })

const NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' })

/** The English name of an ISO 639-1 code; 400 naming `field` when the code is no language. */
export function languageName (field: string, code: string): string {
  const name = NAMES.of(code)
  if (name === undefined) throw new BadRequest(`invalid arguments: /${field}: "${code}" is not an ISO 639-1 language code`)
  return name
}

export interface Translation {
  translation: string
  translated: 'full' | 'partial' | 'none'
  method: 'generative' | 'glossary' | 'unchanged'
  source_language: string
  detected: LanguageGuess | null
  target_language: string
  coverage: number
  segments: Segment[]
  glossary_applied: Array<{ source: string, target: string }>
  untranslated: string[]
  note: string
}

const languageList = (codes: readonly string[]): string => codes.map(code => NAMES.of(code) ?? code).join(', ')

/** The local answer: the glossary's phrases translated, the rest marked; `translation` is empty when nothing was translated. */
export function glossaryTranslation (glossary: Glossary, text: string, source: string, target: string, names: readonly string[]): Omit<Translation, 'detected' | 'method'> & { method: 'glossary' } {
  const base = { method: 'glossary' as const, source_language: source, target_language: target }
  const nothing = (note: string): ReturnType<typeof glossaryTranslation> =>
    ({ ...base, translation: '', translated: 'none', coverage: 0, segments: [], glossary_applied: [], untranslated: [text.trim()], note })
  if (source === 'und') return nothing('No translation model is configured, and the language of the text could not be told: give source_language. Nothing was translated.')
  const missing = [source, target].filter(code => !glossary.covers(code))
  if (missing.length > 0) {
    return nothing(`No translation model is configured, and the campaign glossary has no ${languageList(missing)} phrases (it covers ${languageList(glossary.languages)}): nothing was translated.`)
  }
  const done: GlossaryTranslation = glossary.translate(text, source, target, names)
  const phrases = `${done.applied.length} phrase${done.applied.length === 1 ? '' : 's'}`
  const note = done.translated === 'full'
    ? `No translation model is configured; the campaign glossary covered the whole text (${phrases}). Have a fluent speaker check it before it is published.`
    : done.translated === 'partial'
      ? `No translation model is configured; only the campaign glossary was applied: ${phrases} translated, ${done.untranslated.length} run${done.untranslated.length === 1 ? '' : 's'} of words left as written between ${UNTRANSLATED_OPEN} ${UNTRANSLATED_CLOSE}. This is not a translation to publish.`
      : 'No translation model is configured, and the campaign glossary covers none of this text: nothing was translated.'
  return {
    ...base,
    translation: done.translated === 'none' ? '' : done.translation,
    translated: done.translated,
    coverage: done.coverage,
    segments: done.segments,
    glossary_applied: done.applied,
    untranslated: done.untranslated,
    note
  }
}

export function multilingualFunctions (kit: ModuleKit): ModuleFunction[] {
  const glossary = Glossary.load()
  const prompt = loadPrompt(import.meta.url, 'translate-content')
  return [
    moduleFunction({
      name: 'translate-content',
      args: TranslateArgs,
      handler: async ({ text, target_language: target, source_language: given }) => {
        checkText('text', text, MAX_TRANSLATE_CHARS)
        const targetName = languageName('target_language', target)
        if (given !== undefined) languageName('source_language', given)
        const engine = await kit.language()
        const detected = given === undefined ? engine.language(text) : null
        const source = given ?? (detected as LanguageGuess).language
        let result: Omit<Translation, 'detected'>
        let producedBy = engine.name
        if (source === target) {
          result = {
            translation: text, translated: 'full', method: 'unchanged', source_language: source, target_language: target, coverage: 1,
            segments: [], glossary_applied: [], untranslated: [], note: `The text is already in ${targetName}: nothing to translate.`
          }
        } else {
          const terms = glossary.covers(source) && glossary.covers(target) ? glossary.find(text, source, target) : []
          const applied = [...new Map(terms.map(t => [`${t.source.toLowerCase()}→${t.target}`, { source: t.source, target: t.target }])).values()]
          const translation = await generated(kit.generator, () => promptMessages(prompt, {
            source_language: source === 'und' ? 'unknown (tell it from the text)' : languageName('source_language', source),
            target_language: targetName,
            glossary: applied.length === 0 ? 'none' : applied.map(a => `${a.source} → ${a.target}`).join('\n'),
            text
          }), Math.min(8192, Math.ceil(text.length / 2) + 200))
          if (translation !== undefined) {
            producedBy = translation.engine
            result = {
              translation: translation.text, translated: 'full', method: 'generative', source_language: source, target_language: target, coverage: 1,
              segments: [], glossary_applied: applied, untranslated: [],
              note: `Machine translation by ${translation.engine}: have a fluent speaker check it before it is published.`
            }
          } else {
            result = glossaryTranslation(glossary, text, source, target, engine.entities(text).people)
          }
        }
        return {
          ...result,
          detected,
          sources: [
            ...(result.method === 'unchanged' ? [] : ['campaign glossary (plugins/campaign/data/campaign-glossary.toml)']),
            ...result.glossary_applied.map(a => `glossary: ${a.source} → ${a.target}`)
          ],
          resource_id: contentId(manifest.id, source, target, text, result.translation),
          engine: producedBy
        }
      }
    })
  ]
}
