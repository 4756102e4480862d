// Commitments in a speech or statement: clauses with a commitment verb whose subject names who commits
// (a person or organisation, or "I/we" resolved to the speaker), with the due date they state; and the
// status a piece of evidence implies, from documented cue words.
import { type LanguageEngine, findDue } from '../../module-kit.js'

export interface ExtractedCommitment {
  actor: string
  /** The clause, subject to end. */
  text: string
  /** The commitment verb as written ("will", "'ll", "pledges to"). */
  verb: string
  /** What is promised: the clause after the verb. */
  promise: string
  due_on: string | null
  due_text: string | null
}

/**
 * will / shall / 'll; promise(s/d) / pledge(s/d) / commit(s/ted) / vow(s/ed) to, also as reported
 * ("Mayor Lopez promised to…", "has pledged to"); am / are / is / 'm / 're going to.
 */
const VERB = /'ll\b|\b(?:will|shall)\b|\b(?:promise|promises|promised|pledge|pledges|pledged|commit|commits|committed|vow|vows|vowed)\s+to\b|(?:\b(?:am|are|is)\s+|'(?:m|re|s)\s+)going\s+to\b/gi
/** The subject is looked for after the last of these before the verb. */
const CLAUSE_BREAK = /[,;:()–—]|\s-\s|\b(?:and|but|so|that|because|while|when|if|then)\b/gi
const SELF = /\b(I|we)$/i
const OWN = /\b(?:my|our)(?:\s+[\p{L}-]+){1,3}$/iu
/** A run of capitalised words, possibly joined by of / for / and / the ("City of Springfield"). */
const NAME = /(?:[\p{Lu}][\p{L}\p{M}.'’&-]*)(?:\s+(?:(?:of|for|and|&|the|de|van|von)\s+)?[\p{Lu}][\p{L}\p{M}.'’&-]*)*$/u
/** Capitalised words that are not names when they stand alone. */
const NOT_NAMES = new Set(['it', 'this', 'that', 'there', 'they', 'he', 'she', 'you', 'who', 'which', 'what', 'everyone', 'everybody',
  'nobody', 'someone', 'the', 'these', 'those', 'i', 'we', 'here', 'today', 'tomorrow', 'prices', 'nothing', 'something', 'one'])

interface Subject { start: number, actor: string }

/** The subject directly before a commitment verb at `at` in `sentence`, when it names who commits. */
function subjectBefore (sentence: string, at: number, speaker: string | undefined, isEntity: (name: string) => boolean): Subject | undefined {
  // "Lopez has pledged to": the auxiliary is not part of the subject.
  const before = sentence.slice(0, at).replace(/\s+$/, '').replace(/\s+(?:has|have|had)$/i, '')
  let clauseStart = 0
  for (const brk of before.matchAll(CLAUSE_BREAK)) clauseStart = (brk.index ?? 0) + brk[0].length
  const candidate = before.slice(clauseStart)
  const offset = clauseStart
  const self = SELF.exec(candidate)
  if (self !== null) return { start: offset + self.index, actor: speaker ?? self[1] }
  const own = OWN.exec(candidate)
  if (own !== null) return { start: offset + own.index, actor: speaker ?? own[0].trim() }
  const name = NAME.exec(candidate)
  if (name === null) return undefined
  const actor = name[0].replace(/^The\s+/, '').replace(/'s$/, '')
  const start = offset + name.index + name[0].length - name[0].replace(/^The\s+/, '').length
  if (actor === '' || NOT_NAMES.has(actor.toLowerCase())) return undefined
  const atSentenceStart = sentence.slice(0, start).trim() === ''
  if (atSentenceStart && !actor.includes(' ') && !isEntity(actor)) return undefined
  return { start, actor }
}

/** A clause without the joining words, articles (of the next clause's subject) and punctuation at its end. */
const trimClause = (text: string): string => text.replace(/(?:[\s,;:.!–—-]|\band\b|\bbut\b|\bthe\b)+$/i, '').trim()

/**
 * Commitments sentence by sentence: questions are skipped; each commitment verb with a subject that
 * names who commits starts a clause running to the next such subject or the sentence end.
 */
export function extractCommitments (engine: LanguageEngine, text: string, options: { actor?: string, saidOn: Date }): ExtractedCommitment[] {
  const found: ExtractedCommitment[] = []
  for (const raw of engine.sentences(text)) {
    const sentence = raw.trim().replace(/’/g, "'")
    if (sentence.endsWith('?')) continue
    const entities = engine.entities(sentence)
    const known = [...entities.people, ...entities.organizations].map(n => n.toLowerCase())
    const isEntity = (name: string): boolean => known.some(n => n === name.toLowerCase() || n.split(/\s+/).includes(name.toLowerCase()))
    const hits: Array<Subject & { verbAt: number, verb: string }> = []
    for (const verb of sentence.matchAll(VERB)) {
      const verbAt = verb.index ?? 0
      const subject = subjectBefore(sentence, verbAt, options.actor, isEntity)
      if (subject !== undefined) hits.push({ ...subject, verbAt, verb: verb[0] })
    }
    hits.forEach((hit, i) => {
      const end = i + 1 < hits.length ? hits[i + 1].start : sentence.length
      const clause = trimClause(sentence.slice(hit.start, end))
      const promise = trimClause(sentence.slice(hit.verbAt + hit.verb.length, end))
      const due = findDue(clause, options.saidOn)
      found.push({ actor: hit.actor, text: clause, verb: hit.verb, promise, due_on: due?.due_on ?? null, due_text: due?.due_text ?? null })
    })
  }
  return found
}

export type CommitmentStatus = 'open' | 'in_progress' | 'kept' | 'broken'
export type Verdict = 'kept' | 'broken' | 'in_progress'

const KEPT_CUES = /\b(?:completed?|finished|done|delivered|opened|passed|built|launched|signed|enacted|achieved|fulfilled|implemented|hired|published|funded|kept)\b/gi
const BROKEN_CUES = /\b(?:cancell?ed|abandoned|failed|scrapped|dropped|reversed|broke|broken|withdrawn|withdrew|rejected|shelved|vetoed|missed)\b/gi
/** A cue with one of these within the three words before it does not count. */
const NEGATION = /\b(?:not|never|no|yet to)\b|n't\b/i

function countCues (text: string, cues: RegExp): string[] {
  const counted: string[] = []
  for (const cue of text.matchAll(cues)) {
    const before = text.slice(0, cue.index).split(/\s+/).slice(-3).join(' ')
    if (!NEGATION.test(before)) counted.push(cue[0].toLowerCase())
  }
  return counted
}

/** The verdict evidence implies: more kept cues than broken ones → kept, more broken → broken, else in progress. */
export function inferVerdict (evidence: string): { verdict: Verdict, cues: string[] } {
  const text = evidence.replace(/’/g, "'")
  const kept = countCues(text, KEPT_CUES)
  const broken = countCues(text, BROKEN_CUES)
  if (kept.length > broken.length) return { verdict: 'kept', cues: kept }
  if (broken.length > kept.length) return { verdict: 'broken', cues: broken }
  return { verdict: 'in_progress', cues: [...kept, ...broken] }
}
