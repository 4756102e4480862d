// The empathy simulator: simulate-reaction predicts how voter personas (a default set, or the caller's)
// would react to a message, by the heuristic of persona-reaction.ts, with a cited knowledge-base line
// for each persona's missing priority; with a generative provider, each reaction is written by it.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageEngine, generated, loadPrompt, promptMessages, type PromptTemplate, mean, round, addressingPassages, type CitedSource, Citations, type KbLike, sourceLines, findIssues, checkText, contentId, TextArg, type ModuleKit } from '../../module-kit.js'
import { loadPersonaBook, type Persona, type PersonaBook } from './personas.js'
import { concernCues, simulateReaction, type PersonaReaction } from './persona-reaction.js'
import { manifest } from './manifest.js'

/** Most personas per call. */
export const MAX_PERSONAS = 8

export const HEURISTIC_NOTE = 'A heuristic simulation, not a model of voters: concerns are matched by keyword cues, feelings by word ' +
  'sentiment and by what the message raises or cuts, and the reaction is written from templates. Use it to spot gaps in a message, not to predict votes.'

const Words = (max: number): ReturnType<typeof Type.Array> => Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { maxItems: max, default: [] })

const PersonaArg = Type.Union([
  Type.String({ minLength: 1, maxLength: 64, description: 'the id of a default persona (data/voter-personas.toml)' }),
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.String({ maxLength: 300, default: '' }),
    concerns: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { minItems: 1, maxItems: 8 }),
    priorities: Words(8),
    pays: Words(30),
    gains: Words(30)
  }, { additionalProperties: false })
])

const SimulateArgs = Type.Object({
  message: TextArg('the message, speech line or post to test'),
  personas: Type.Optional(Type.Array(PersonaArg, { minItems: 1, maxItems: MAX_PERSONAS }))
}, { additionalProperties: false })

type PersonaInput = string | { name: string, description: string, concerns: string[], priorities: string[], pays: string[], gains: string[] }

/** The personas asked for: default ones by id, the caller's own checked (priorities among the concerns). */
export function resolvePersonas (defaults: readonly Persona[], inputs: readonly PersonaInput[] | undefined): Persona[] {
  if (inputs === undefined) return [...defaults]
  return inputs.map((input, i) => {
    if (typeof input === 'string') {
      const found = defaults.find(p => p.id === input)
      if (found === undefined) throw new BadRequest(`invalid arguments: /personas/${i}: no default persona "${input}" (${defaults.map(p => p.id).join(', ')})`)
      return found
    }
    const concerns = input.concerns.map(c => c.trim().toLowerCase())
    const stray = input.priorities.find(p => !concerns.includes(p.trim().toLowerCase()))
    if (stray !== undefined) throw new BadRequest(`invalid arguments: /personas/${i}/priorities: "${stray}" is not one of the persona's concerns`)
    const id = `${input.name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '')}-${i + 1}`
    return { id, name: input.name, description: input.description, concerns, priorities: input.priorities.map(p => p.trim().toLowerCase()), pays: input.pays, gains: input.gains }
  })
}

/** The knowledge base's best line on a concern (queried with the concern and its cues), or undefined. */
function lineOn (engine: LanguageEngine, kb: KbLike, book: PersonaBook, concern: string): Omit<CitedSource, 'cite'> | undefined {
  const [best] = addressingPassages(engine, kb, [[concern, ...concernCues(book, concern).slice(0, 8)].join(' ')])
  if (best === undefined) return undefined
  const { cite: _cite, ...source } = best
  return source
}

function findingLines (r: PersonaReaction): string {
  return [
    `Concerns the message addresses: ${r.addressed.map(a => a.concern).join(', ') || 'none'}`,
    `Concerns it leaves out: ${r.missing.join(', ') || 'none'}`,
    `What it raises or cuts for this voter: ${r.effects.map(e => `${e.direction === 'up' ? 'raises' : 'cuts'} ${e.cue} (${e.effect > 0 ? 'good' : 'bad'} for them)`).join('; ') || 'nothing'}`,
    `Estimated feeling: ${r.feeling_label} (${r.feeling}); reaction: ${r.reaction}`
  ].join('\n')
}

/** The provider's reaction in the persona's voice, or undefined (no provider, or it fell back). */
async function generatedQuote (kit: ModuleKit, template: PromptTemplate, message: string, persona: Persona, r: PersonaReaction, context: readonly CitedSource[]): Promise<{ text: string, engine: string } | undefined> {
  return await generated(kit.generator, () => promptMessages(template, {
    persona: `${persona.name}${persona.description !== '' ? ` (${persona.description})` : ''}`,
    concerns: persona.concerns.map(c => persona.priorities.includes(c) ? `${c} (priority)` : c).join(', '),
    findings: findingLines(r),
    sources: context.length === 0 ? 'none found' : sourceLines(context),
    message: message.trim()
  }), 200)
}

export function empathySimulatorFunctions (kit: ModuleKit): ModuleFunction[] {
  const template = loadPrompt(import.meta.url, 'simulate-reaction')
  const book = loadPersonaBook()
  return [
    moduleFunction({
      name: 'simulate-reaction',
      args: SimulateArgs,
      handler: async ({ message, personas: inputs }) => {
        checkText('message', message)
        const personas = resolvePersonas(book.personas, inputs as PersonaInput[] | undefined)
        const engine = await kit.language()
        const citations = new Citations()
        // With a provider, the knowledge base's passages about the message are its context.
        const context = kit.generator === undefined ? [] : addressingPassages(engine, kit.kb, [message]).map(({ cite: _cite, ...s }) => ({ ...s, cite: citations.cite(s) }))
        const lines = new Map<string, { cite: number, sentence: string } | null>()
        let producedBy = engine.name
        const reactions = await Promise.all(personas.map(async persona => {
          const reaction = simulateReaction(engine, book, message, persona)
          const gap = reaction.missing.find(c => persona.priorities.includes(c))
          let suggestion: { concern: string, cite: number, sentence: string } | null = null
          if (gap !== undefined) {
            if (!lines.has(gap)) {
              const line = lineOn(engine, kit.kb, book, gap)
              lines.set(gap, line === undefined ? null : { cite: citations.cite(line), sentence: line.sentence })
            }
            const line = lines.get(gap)
            if (line !== null && line !== undefined) suggestion = { concern: gap, ...line }
          }
          const voiced = await generatedQuote(kit, template, message, persona, reaction, context)
          if (voiced !== undefined) producedBy = voiced.engine
          return { ...reaction, quote: voiced?.text ?? reaction.quote, suggestion }
        }))
        const count = (kind: string): number => reactions.filter(r => r.reaction === kind).length
        return {
          reactions,
          summary: {
            supportive: count('supportive'),
            opposed: count('opposed'),
            mixed: count('mixed'),
            indifferent: count('indifferent'),
            mean_feeling: round(mean(reactions.map(r => r.feeling))),
            mean_relevance: round(mean(reactions.map(r => r.relevance)))
          },
          message_issues: findIssues(message),
          method: producedBy === engine.name ? 'heuristic' : 'heuristic + generative reactions',
          note: HEURISTIC_NOTE,
          citations: citations.passages,
          sources: citations.lines,
          resource_id: contentId(manifest.id, message, JSON.stringify(personas)),
          engine: producedBy
        }
      }
    })
  ]
}
