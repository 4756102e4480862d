// The empathy simulator's editable data, read once at start and checked: the default voter personas and
// the cue words of concerns outside the issue lexicon (data/voter-personas.toml), and the wording of the
// reactions and objections (modules/empathy-simulator/templates/simulate-reaction.json). The method is persona-reaction.ts.
import { Type, type Static } from '../../../../kernel/schema.js'
import { loadTemplates, loadDataFile } from '../../module-kit.js'

const Words = Type.Array(Type.String({ minLength: 1, maxLength: 60 }))

const PersonaSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.String({ maxLength: 300 }),
  /** Topics the persona cares about: issues of the issue lexicon, keys of `concern_cues`, or any words. */
  concerns: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { minItems: 1 }),
  /** The concerns that weigh double. */
  priorities: Words,
  /** Words for what the persona pays or bears: raising them angers, cutting them pleases. */
  pays: Words,
  /** Words for what the persona gains from: raising them pleases, cutting them angers. */
  gains: Words
}, { additionalProperties: false })

export type Persona = Static<typeof PersonaSchema>

const PersonaFile = Type.Object({
  persona: Type.Array(PersonaSchema, { minItems: 1 }),
  concern_cues: Type.Record(Type.String(), Words)
}, { additionalProperties: false })

const Sentences = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })

const Wording = Type.Object({
  about: Type.String(),
  objections: Type.Intersect([Type.Record(Type.String(), Type.String()), Type.Object({ '*': Type.String() })]),
  harm_objections: Type.Object({ pays: Type.String(), gains: Type.String() }, { additionalProperties: false }),
  reactions: Type.Object({ supportive: Sentences, opposed: Sentences, mixed: Sentences, indifferent: Sentences }, { additionalProperties: false })
}, { additionalProperties: false })

export type Reaction = 'supportive' | 'opposed' | 'mixed' | 'indifferent'

export interface PersonaBook {
  personas: Persona[]
  /** Cue words of concerns the issue lexicon does not have. */
  concernCues: Readonly<Record<string, readonly string[]>>
  /** A persona's question when the message leaves a concern out ("*": any other, {{concern}}). */
  objections: Readonly<Record<string, string>>
  /** What a persona says when the message raises what it pays or cuts what it gains ({{cue}}). */
  harmObjections: { pays: string, gains: string }
  /** Quote-like reaction sentences by reaction ({{topic}}, {{missing}}). */
  reactions: Readonly<Record<Reaction, readonly string[]>>
}

/** The personas and the wording; start-up fails naming the file and the field that does not fit. */
export function loadPersonaBook (): PersonaBook {
  const data = loadDataFile('voter-personas', PersonaFile)
  const wording = loadTemplates(import.meta.url, 'simulate-reaction', Wording)
  for (const p of data.persona) {
    const stray = p.priorities.find(x => !p.concerns.includes(x))
    if (stray !== undefined) throw new Error(`voter-personas.toml: persona "${p.id}": priority "${stray}" is not one of its concerns`)
  }
  return { personas: data.persona, concernCues: data.concern_cues, objections: wording.objections, harmObjections: wording.harm_objections, reactions: wording.reactions }
}
