// Legal text read as provisions: a bill, rule or policy split into sections and clauses, each clause's
// kind (an obligation, a prohibition or a permission) by its first modal verb, and sums of money.
import type { LanguageEngine } from '../language/engine.js'

export interface Section { heading: string, body: string }
export interface Clause { section: string, text: string }
export type ProvisionKind = 'obligation' | 'prohibition' | 'permission'

export interface Provision {
  kind: ProvisionKind
  section: string
  text: string
  /** Who it binds: the words before the modal verb, enumerator and determiners removed. */
  subject: string
  /** The modal phrase as written ("shall", "may not"…). */
  modal: string
  /** What follows the modal phrase. */
  action: string
}

/** A line opening a section: "Section 3", "SEC. 3.", "§ 3", "Article IV", "3." */
export const SECTION_LINE = /^\s*(?:(?:section|sec\.?|article|art\.?|§{1,2})\s*[0-9IVXLC]+[A-Za-z]?\b\.?|\d{1,3}\.(?=\s))/i
/** A section line this long or shorter is a heading; a longer one is the marker followed by text. */
const HEADING_WORDS = 10

/**
 * Sections by their opening lines; without any, paragraphs are sections "¶1", "¶2"… (blank-line
 * separated, or one per line when the text has no blank line but several lines, as pasted text often
 * does). Text before the first opening line is the "preamble".
 */
export function splitSections (text: string): Section[] {
  const lines = text.split(/\r?\n/)
  if (!lines.some(line => SECTION_LINE.test(line))) {
    const blocks = text.split(/\n\s*\n/).map(p => p.trim()).filter(p => p !== '')
    const paragraphs = blocks.length === 1 ? lines.map(line => line.trim()).filter(line => line !== '') : blocks
    return paragraphs.map((body, i) => ({ heading: `¶${i + 1}`, body }))
  }
  const sections: Array<{ heading: string, lines: string[] }> = [{ heading: 'preamble', lines: [] }]
  for (const line of lines) {
    const marker = SECTION_LINE.exec(line)
    if (marker === null) {
      sections[sections.length - 1].lines.push(line)
      continue
    }
    const whole = line.trim()
    if (whole.split(/\s+/).length <= HEADING_WORDS) sections.push({ heading: whole, lines: [] })
    else sections.push({ heading: marker[0].trim(), lines: [line.slice(marker.index + marker[0].length)] })
  }
  return sections.map(s => ({ heading: s.heading, body: s.lines.join('\n').replace(/\s+/g, ' ').trim() }))
    .filter(s => s.body !== '' || s.heading !== 'preamble')
}

/** Clauses: the engine's sentences, cut again at semicolons and before a "(a)" enumerator that follows a colon. */
export function splitClauses (engine: LanguageEngine, sections: readonly Section[]): Clause[] {
  return sections.flatMap(section => engine.sentences(section.body)
    .flatMap(sentence => sentence.split(/;\s+|(?<=:)\s+(?=\([a-z0-9]{1,4}\)\s)/i))
    .map(text => text.trim()).filter(text => /\p{L}/u.test(text))
    .map(text => ({ section: section.heading, text })))
}

const PROHIBITING = ['shall not', 'shall never', 'must not', 'must never', 'may not', 'cannot', 'is prohibited from', 'are prohibited from',
  'is prohibited', 'are prohibited', 'is forbidden', 'are forbidden', 'is not permitted to', 'are not permitted to', 'is not allowed to', 'are not allowed to']
const OBLIGING = ['shall', 'must', 'is required to', 'are required to', 'is obligated to', 'are obligated to', 'has a duty to', 'have a duty to']
const PERMITTING = ['may', 'is permitted to', 'are permitted to', 'is entitled to', 'are entitled to', 'is allowed to', 'are allowed to', 'can']
/** The first modal phrase of a clause, longest alternatives first. */
const MODAL = new RegExp(`\\b(${[...PROHIBITING, ...OBLIGING, ...PERMITTING].sort((a, b) => b.length - a.length).join('|')})\\b`, 'i')
/** After the modal: a penalty, definition, citation or commencement, not a provision. */
const NOT_A_PROVISION = /^\s+(?:be (?:liable|subject to|punished|punishable|fined|guilty|imprisoned|cited|known|referred to)|mean|means|include|have the meaning|take effect|come into force|apply)\b/i
const ENUMERATOR = /^\(?[a-z0-9]{1,4}\)\s*/i
const DETERMINERS = /^(?:(?:each|every|a|an|the|any|all|such|no|neither)\s+)+/i

export function classifyClause (clause: Clause): Provision | undefined {
  const modal = MODAL.exec(clause.text)
  if (modal === null) return undefined
  const after = clause.text.slice(modal.index + modal[0].length)
  if (NOT_A_PROVISION.test(after)) return undefined
  const phrase = modal[1].toLowerCase()
  const before = clause.text.slice(0, modal.index).replace(ENUMERATOR, '').trim()
  let kind: ProvisionKind = PROHIBITING.includes(phrase) ? 'prohibition' : OBLIGING.includes(phrase) ? 'obligation' : 'permission'
  // "No person shall…", "Neither … may…": a negated subject turns the duty or leave into a prohibition.
  if (kind !== 'prohibition' && /^(?:no|neither)\s/i.test(before)) kind = 'prohibition'
  return {
    kind,
    section: clause.section,
    text: clause.text,
    subject: before.replace(DETERMINERS, '').split(/\s+/).slice(0, 8).join(' ').replace(/[,:]$/, ''),
    modal: modal[1],
    action: after.trim().replace(/[.;:]$/, '')
  }
}

/** A sum of money: `$ € £` and a number (optionally million/billion/thousand), or a number and dollars, euros, pounds, USD, EUR, GBP. */
export const AMOUNT = /[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|thousand))?|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|euros|pounds|USD|EUR|GBP)\b/gi
