// Campaign copy's method: the shape and length limit of each channel, the headline from the key phrase
// of the cited sentences, and the extractive composition (sentences added best first while the copy
// stays within the limit, the call to action and the rest of the wording from templates/campaign-copy.json).
// An SMS promises "STOP to opt out" only while the campaign receives replies, and a generated one
// is cleared of any such promise otherwise.
import { Type, type Static } from '../../../../kernel/schema.js'
import { type LanguageEngine, fillTemplate, clip, marked, type GroundedSentence } from '../../module-kit.js'
import { CHANNELS, TONES, type Channel, type CopyTone } from './choices.js'

export { CHANNELS, TONES, type Channel, type CopyTone }
export const LENGTHS = ['short', 'medium', 'long'] as const
export type CopyLength = typeof LENGTHS[number]

export interface ChannelShape {
  /** Most characters of the copy's text (the headline apart). */
  limit: number
  /** Most characters of the headline; 0: the channel has none. */
  headline: number
  /** Sentences quoted for a short, medium and long copy. */
  sentences: Readonly<Record<CopyLength, number>>
  /** Whether a "Sources: [1] …" line ends the text. */
  sourcesLine: boolean
  /** What the generative provider is told about the shape. */
  rules: string
}

export const SHAPES: Readonly<Record<Channel, ChannelShape>> = {
  sms: { limit: 160, headline: 0, sentences: { short: 1, medium: 1, long: 2 }, sourcesLine: false, rules: 'an SMS text message: at most 160 characters in all, call to action included; no headline' },
  social: { limit: 280, headline: 0, sentences: { short: 1, medium: 2, long: 3 }, sourcesLine: false, rules: 'a social media post: at most 280 characters in all, call to action and hashtag included; no headline' },
  email: { limit: 2000, headline: 78, sentences: { short: 2, medium: 3, long: 5 }, sourcesLine: true, rules: 'an email: a subject line of at most 78 characters as the headline, then a greeting, short paragraphs, the call to action and a sign-off; at most 2,000 characters' },
  flyer: { limit: 800, headline: 60, sentences: { short: 2, medium: 3, long: 4 }, sourcesLine: true, rules: 'a printed flyer: a headline of at most 60 characters, then short bullet points ("• ") and the call to action; at most 800 characters' },
  speech: { limit: 4000, headline: 0, sentences: { short: 3, medium: 5, long: 8 }, sourcesLine: false, rules: 'a short stump speech to be spoken aloud: plain sentences, no headline, no bullet points; at most 4,000 characters' }
}

const ByTone = Type.Object(Object.fromEntries(TONES.map(t => [t, Type.String()])) as Record<CopyTone, ReturnType<typeof Type.String>>, { additionalProperties: false })
const ByChannel = <T extends ReturnType<typeof Type.String> | typeof ByTone>(value: T): ReturnType<typeof Type.Object<Record<Channel, T>>> =>
  Type.Object(Object.fromEntries(CHANNELS.map(c => [c, value])) as Record<Channel, T>, { additionalProperties: false })

/** The schema of templates/campaign-copy.json. */
export const CopyTemplates = Type.Object({
  about: Type.Optional(Type.String()),
  headline: ByTone,
  opener: ByTone,
  greeting: ByChannel(Type.String()),
  call_to_action: ByChannel(ByTone),
  sms_opt_out: Type.String(),
  sign_off: ByChannel(Type.String())
}, { additionalProperties: false })
export type CopyTemplates = Static<typeof CopyTemplates>

export interface CopyRequest { topic: string, channel: Channel, tone: CopyTone, length: CopyLength, audience?: string }

/** Words kept lower-case inside a title. */
const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'by', 'for', 'in', 'of', 'on', 'or', 'the', 'to', 'with'])

export function titleCase (phrase: string): string {
  return phrase.split(/\s+/).filter(w => w !== '').map((w, i) => i > 0 && SMALL_WORDS.has(w.toLowerCase()) ? w.toLowerCase() : `${w[0].toUpperCase()}${w.slice(1)}`).join(' ')
}

/**
 * The headline's phrase: going through the candidate sentences in their order (best passage first),
 * the first of a sentence's key phrases (the engine's, best first) that shares a term with the topic;
 * else the first key phrase of the first sentence that has one; without any, the topic as asked. In
 * title case.
 */
export function headlinePhrase (engine: LanguageEngine, topic: string, sentences: readonly Pick<GroundedSentence, 'text'>[]): string {
  const topicTerms = new Set(engine.terms(topic))
  const phrases = sentences.map(s => engine.keyPhrases(s.text, 5).map(p => p.term))
  const phrase = phrases.flat().find(p => engine.terms(p).some(t => topicTerms.has(t))) ?? phrases.flat()[0] ?? topic.trim()
  return titleCase(phrase)
}

/** The phrase as a hashtag: its words capitalised and joined, letters and digits only, at most 30 characters. */
export const hashtagOf = (phrase: string): string =>
  `#${phrase.split(/\s+/).map(w => w.replace(/[^\p{L}\p{N}]/gu, '')).filter(w => w !== '').map(w => `${w[0].toUpperCase()}${w.slice(1)}`).join('').slice(0, 30)}`

/** The template values of a request: topic, phrase, audience ("friends" when not given), hashtag. */
export function copyValues (request: CopyRequest, phrase: string): Record<string, string> {
  return { topic: request.topic.trim(), phrase, audience: request.audience?.trim() || 'friends', hashtag: hashtagOf(phrase) }
}

/** The call to action of the channel and tone, filled in; an SMS's ends with how to opt out when `optOut` (replies are received). */
export function callToAction (templates: CopyTemplates, request: CopyRequest, phrase: string, optOut: boolean): string {
  const cta = fillTemplate(templates.call_to_action[request.channel][request.tone], copyValues(request, phrase))
  return request.channel === 'sms' && optOut ? `${cta} ${templates.sms_opt_out}` : cta
}

/** What tells readers how to stop messages by reply: STOP in capitals (as carriers write it), "reply stop" in any case, opting out, unsubscribing. */
const OPT_OUT_PROMISES = [/\bSTOP\b/, /\b(?:reply|text|txt|send)\s+["'“‘]?stop\b/i, /\bopt[- ]?out\b/i, /\bunsubscrib/i]

/** `text` without its sentences promising a way to opt out by reply (for an SMS sent while replies are not received). */
export function withoutOptOutPromise (text: string): string {
  return text.split(/(?<=[.!?])\s+/).filter(sentence => !OPT_OUT_PROMISES.some(promise => promise.test(sentence))).join(' ')
}

export interface Composed {
  headline: string
  text: string
  call_to_action: string
  /** The sentences quoted, in the copy's order. */
  sentences: GroundedSentence[]
  /** Whether a sentence had to be cut to fit the limit. */
  clipped: boolean
}

/** The text of a copy quoting `chosen`, in the channel's shape. */
function assemble (channel: Channel, parts: { greeting: string, opener: string, cta: string, signOff: string, sources: (cites: number[]) => string[] }, chosen: readonly GroundedSentence[]): string {
  const shape = SHAPES[channel]
  const body = channel === 'flyer' ? chosen.map(s => `• ${marked(s)}`).join('\n') : chosen.map(marked).join(' ')
  const opened = [parts.opener, body].filter(p => p !== '').join(' ')
  const blocks = channel === 'sms' || channel === 'social'
    ? [[parts.greeting, opened, parts.cta].filter(p => p !== '').join(' ')]
    : [parts.greeting, channel === 'flyer' ? body : opened, parts.cta, parts.signOff]
  const lines = shape.sourcesLine ? parts.sources([...new Set(chosen.map(s => s.cite))].sort((a, b) => a - b)) : []
  if (lines.length > 0) blocks.push(`Sources: ${lines.join('; ')}`)
  return blocks.filter(b => b !== '').join('\n\n')
}

/**
 * The extractive copy: the candidate sentences are taken in their order (best passage first) and each
 * is added when the text stays within the channel's limit, until the length's number of sentences is
 * reached; when not even the first fits, it is cut at a word boundary to fit ("…").
 */
export function composeCopy (templates: CopyTemplates, request: CopyRequest, phrase: string, candidates: readonly GroundedSentence[], sources: (cites: number[]) => string[], optOut = false): Composed {
  const shape = SHAPES[request.channel]
  const values = copyValues(request, phrase)
  const withOpener = request.channel === 'email' || request.channel === 'speech'
  const parts = {
    greeting: fillTemplate(templates.greeting[request.channel], values),
    opener: withOpener ? fillTemplate(templates.opener[request.tone], values) : '',
    cta: callToAction(templates, request, phrase, optOut),
    signOff: fillTemplate(templates.sign_off[request.channel], values),
    sources
  }
  const headline = shape.headline === 0 ? '' : clip(fillTemplate(templates.headline[request.tone], values), shape.headline)
  const chosen: GroundedSentence[] = []
  for (const candidate of candidates) {
    if (chosen.length === shape.sentences[request.length]) break
    if (assemble(request.channel, parts, [...chosen, candidate]).length <= shape.limit) chosen.push(candidate)
  }
  let clipped = false
  if (chosen.length === 0 && candidates.length > 0) {
    const first = candidates[0]
    const room = shape.limit - assemble(request.channel, parts, [{ ...first, text: '' }]).length
    chosen.push({ ...first, text: clip(first.text, Math.max(1, room)) })
    clipped = true
  }
  return { headline, text: clip(assemble(request.channel, parts, chosen), shape.limit), call_to_action: parts.cta, sentences: chosen, clipped }
}
