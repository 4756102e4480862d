// The analysis of one canvassing call's transcript: who the caller and the contact are, turns and talk
// share per speaker, sentiment per turn and its trajectory, the issues the contact raised, the outcome
// by documented phrase rules, and whether the call needs a follow-up.
import { type LanguageEngine, mean, round, findIssues, type IssueMention, parseTurns, speakersOf, type TranscriptTurn } from '../../module-kit.js'

export type Outcome = 'supporter' | 'opposed' | 'undecided' | 'refused' | 'not_reached' | 'unknown'
export const OUTCOMES: readonly Outcome[] = ['supporter', 'opposed', 'undecided', 'refused', 'not_reached', 'unknown']

type Role = 'caller' | 'contact' | 'other'

/** The contact's stated position, strongest first: within one sentence the earlier rule wins. */
const POSITION_RULES: ReadonlyArray<[Outcome, RegExp]> = [
  ['refused', /\b(?:not interested|(?:don't|do not|never) call|stop calling|take me off|remove me|leave me alone|no,? thank(?:s| you)|(?:don't|do not) want to talk|hang(?:ing)? up)\b/],
  ['opposed', new RegExp([
    "\\bi (?:won't|will not|wouldn't|would not|(?:am|'m) not going to|(?:am|'m) never going to|will never|'ll never|never|can't|cannot) (?:ever )?(?:vote for|support|back)\\b",
    "\\bi (?:don't|do not) (?:support|like|trust) (?:her|him|them|your candidate|the candidate|your campaign)\\b",
    "\\bi(?:'m| am) (?:not voting for|voting against|against (?:her|him|them|your candidate|the candidate))\\b",
    '\\bvote against\\b', '\\bi oppose\\b', '\\bno way\\b',
    "\\bi(?:'m| am) (?:voting for|supporting) (?:the other|her opponent|his opponent|the opponent)\\b"
  ].join('|'))],
  ['undecided', /\b(?:not sure|unsure|undecided|(?:haven't|have not|not) (?:yet )?(?:decided|made up my mind)|still deciding|on the fence|need to think|let me think|need more information|(?:don't|do not) know yet|depends on|thinking about it|weighing (?:my|the) options)\b/],
  ['supporter', new RegExp([
    "\\bi(?:'ll| will| am going to|'m going to|'m gonna| am gonna) (?:definitely |certainly |probably |absolutely )?(?:vote for|support|back)\\b",
    '\\bcount me in\\b', '\\b(?:you can|you could) count on me\\b', '\\bsign me up\\b',
    "\\byou(?: have|'ve got|'ve| got) my (?:vote|support)\\b",
    "\\bi(?:'m| am) (?:definitely |already )?(?:voting for|supporting|a supporter|with (?:her|him|them|you))\\b",
    "\\bi (?:fully |strongly |really )?support (?:her|him|them|you|your candidate|the candidate|the campaign)\\b",
    "\\bi(?:'ve| have) already voted for\\b"
  ].join('|'))]
]

/** Said by anyone on the call: nobody (or no one able to talk) was reached. */
const NOT_REACHED = /\b(?:voicemail|voice mail|no answer|(?:didn't|did not) (?:answer|pick up)|wrong number|left a message|answering machine|not home|not available|disconnected|busy signal|not in service)\b/

/** Said by anyone on the call: someone is to call, send or write again. */
const FOLLOW_UP = /\b(?:call (?:me |you )?back|call (?:me |you )?again|send (?:me|you)|e-?mail (?:me|you)|mail (?:me|you)|more information|more info|get back to (?:me|you)|follow up|talk (?:again )?later|let me think|(?:any|some|a few) questions)\b/g

/** Lower case, typographic apostrophes made plain. */
const plain = (text: string): string => text.toLowerCase().replace(/[’‘]/g, "'")

export interface SpeakerStats { speaker: string, role: Role, turns: number, words: number, talk_share: number }
export interface TurnSentiment { index: number, speaker: string, role: Role, text: string, score: number, polarity: number, label: string }

export interface CallAnalysis {
  caller: string
  contact: string
  speakers: SpeakerStats[]
  turns: TurnSentiment[]
  /** Mean polarity of the contact's turns (0 without any). */
  sentiment: number
  trajectory: { first_half: number, second_half: number, change: number, direction: 'improving' | 'worsening' | 'steady' }
  issues: IssueMention[]
  outcome: Outcome
  /** The contact's sentence the outcome was read from, or the not-reached cue. */
  outcome_evidence: string
  follow_up: boolean
  follow_up_reasons: string[]
}

/** A change of mean polarity between the halves at least this large is a direction. */
export const TRAJECTORY_THRESHOLD = 0.2

const matchesName = (label: string, name: string | undefined): boolean => {
  if (name === undefined || name.trim() === '') return false
  const [a, b] = [label.toLowerCase(), name.trim().toLowerCase()]
  return a === b || a === b.split(/\s+/)[0] || b === a.split(/\s+/)[0]
}

const CALLER_LABEL = /^(?:caller|volunteer|canvasser|agent|interviewer|organi[sz]er|staff)\b/i
const CONTACT_LABEL = /^(?:voter|contact|resident|respondent|constituent|recipient|callee|citizen|homeowner|household)\b/i

/** Which speaker is the caller and which the contact; see the documented order of rules. */
export function assignRoles (speakers: readonly string[], names: { caller?: string, contact?: string }): { caller: string, contact: string } {
  if (speakers.length <= 1) return { caller: '', contact: speakers[0] ?? '' }
  const byContact = speakers.find(s => matchesName(s, names.contact))
  const byCaller = speakers.find(s => matchesName(s, names.caller))
  if (byContact !== undefined) return { caller: byCaller ?? speakers.find(s => s !== byContact) as string, contact: byContact }
  if (byCaller !== undefined) return { caller: byCaller, contact: speakers.find(s => s !== byCaller) as string }
  const contact = speakers.find(s => CONTACT_LABEL.test(s))
  const caller = speakers.find(s => CALLER_LABEL.test(s) && s !== contact)
  if (contact !== undefined) return { caller: caller ?? speakers.find(s => s !== contact) as string, contact }
  if (caller !== undefined) return { caller, contact: speakers.find(s => s !== caller) as string }
  return { caller: speakers[0], contact: speakers[1] }
}

/** The outcome from the contact's sentences: the last sentence holding a position rule decides. */
export function callOutcome (contactSentences: readonly string[], allText: string): { outcome: Outcome, evidence: string } {
  for (let i = contactSentences.length - 1; i >= 0; i--) {
    const sentence = plain(contactSentences[i])
    const rule = POSITION_RULES.find(([, pattern]) => pattern.test(sentence))
    if (rule !== undefined) return { outcome: rule[0], evidence: contactSentences[i] }
  }
  const missed = NOT_REACHED.exec(plain(allText))
  if (missed !== null) return { outcome: 'not_reached', evidence: missed[0] }
  return { outcome: contactSentences.length === 0 ? 'not_reached' : 'unknown', evidence: '' }
}

/** Mean polarity of the first ⌈n/2⌉ and the last ⌈n/2⌉ of `polarities` (an odd middle counts in both). */
export function trajectory (polarities: readonly number[]): CallAnalysis['trajectory'] {
  const half = Math.ceil(polarities.length / 2)
  const first = mean(polarities.slice(0, half))
  const second = mean(polarities.slice(polarities.length - half))
  const change = second - first
  return {
    first_half: round(first),
    second_half: round(second),
    change: round(change),
    direction: change >= TRAJECTORY_THRESHOLD ? 'improving' : change <= -TRAJECTORY_THRESHOLD ? 'worsening' : 'steady'
  }
}

const wordCount = (text: string): number => text.split(/\s+/).filter(w => w !== '').length

export function analyzeCall (engine: LanguageEngine, transcript: string, names: { caller?: string, contact?: string }): CallAnalysis {
  const turns: TranscriptTurn[] = parseTurns(transcript)
  const speakers = speakersOf(turns)
  const { caller, contact } = assignRoles(speakers.length === 0 && turns.length > 0 ? [''] : speakers, names)
  const roleOf = (speaker: string): Role => speaker === contact ? 'contact' : speaker === caller ? 'caller' : 'other'

  const totalWords = turns.reduce((sum, turn) => sum + wordCount(turn.text), 0)
  const stats = new Map<string, SpeakerStats>()
  for (const turn of turns) {
    const entry = stats.get(turn.speaker) ?? { speaker: turn.speaker, role: roleOf(turn.speaker), turns: 0, words: 0, talk_share: 0 }
    entry.turns++
    entry.words += wordCount(turn.text)
    stats.set(turn.speaker, entry)
  }
  for (const entry of stats.values()) entry.talk_share = totalWords === 0 ? 0 : round(entry.words / totalWords)

  const moods: TurnSentiment[] = turns.map((turn, index) => {
    const mood = engine.sentiment(turn.text)
    return { index, speaker: turn.speaker, role: roleOf(turn.speaker), text: turn.text, score: mood.score, polarity: mood.polarity, label: mood.label }
  })
  const contactTurns = turns.filter(turn => roleOf(turn.speaker) === 'contact')
  const contactPolarities = moods.filter(m => m.role === 'contact').map(m => m.polarity)
  const contactText = contactTurns.map(turn => turn.lines.join('\n')).join('\n')
  const { outcome, evidence } = callOutcome(contactTurns.flatMap(turn => turn.lines.flatMap(line => engine.sentences(line))), transcript)

  const reasons = outcome === 'undecided' ? ['undecided'] : []
  for (const cue of plain(transcript).matchAll(FOLLOW_UP)) if (!reasons.includes(cue[0])) reasons.push(cue[0])
  return {
    caller: names.caller ?? caller,
    contact: names.contact ?? contact,
    speakers: [...stats.values()],
    turns: moods,
    sentiment: round(mean(contactPolarities)),
    trajectory: trajectory(contactPolarities),
    issues: findIssues(contactText),
    outcome,
    outcome_evidence: evidence,
    follow_up: reasons.length > 0,
    follow_up_reasons: reasons
  }
}
