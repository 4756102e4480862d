// The question-anticipation method: the questions an audience is likely to ask at an event, found in
// what the campaign already holds — questions asked in posts, negative or loud narratives, urgent local
// issues, topics the posters split on, commitments due or broken — each scored, with its evidence
// cited and a suggested answer from the knowledge base (cited), or the plain statement that there is none.
import { type LanguageEngine, type ChatMessage, promptMessages, type PromptTemplate, round, addressingPassages, quoteClaim, type KbLike, shiftDay, findIssues, contentId, type Post, type SourceList, evidence as stanceEvidence, foldTerm, stanceTable, plural, postActors } from '../../module-kit.js'
import { type Commitment, isOverdue } from '../accountability/index.js'
import { analyzeLocalIssues } from '../local-issues/index.js'
import { carries, extractNarratives } from '../narrative-contagion/index.js'
import { findConsensus } from '../faction-mapper/index.js'

export type QuestionKind = 'asked' | 'narrative' | 'local-issue' | 'tension' | 'commitment'
const KIND_ORDER: readonly QuestionKind[] = ['asked', 'narrative', 'local-issue', 'tension', 'commitment']

export interface AnticipatedQuestion {
  question_id: string
  kind: QuestionKind
  question: string
  /** 0 to 1: how likely and how pressing (see the documented formulas). */
  score: number
  /** Why it is likely: what was measured. */
  why: string
  /** The records it was read from, cited [n] in the result's sources. */
  evidence: Array<{ cite: number, text: string }>
  answer: SuggestedAnswer
}

export interface SuggestedAnswer {
  /** The suggested answer, citing [n]; NO_ANSWER when the knowledge base holds nothing on it. */
  text: string
  found: boolean
  method: 'extractive' | 'generative' | 'none'
  cites: number[]
}

export const NO_ANSWER = 'No prepared answer in the knowledge base.'
/** Two questions at least this similar (engine cosine) are one. */
export const SAME_QUESTION = 0.5
/** A question less similar than this to every kept one is new (when ranking). */
export const DISTINCT_QUESTION = 0.6
/** Commitments due within this many days of the event are asked about. */
export const DUE_SOON_DAYS = 30
/** Most sentences of an extractive answer. */
export const ANSWER_SENTENCES = 2
/** Evidence items quoted per question. */
const EVIDENCE_ITEMS = 3

/** Words of an event's description that say what kind of event it is, not what it is about. */
const EVENT_WORDS = new Set(('town hall meeting meet debate forum rally event night evening morning session interview visit tour ' +
  'breakfast lunch dinner conference panel q a qa questions answers community candidate speech remarks press').split(' '))

/** The folded content terms of a focus (topic or event), event-kind words left out. */
export function focusTerms (engine: LanguageEngine, text: string | undefined): string[] {
  if (text === undefined) return []
  return [...new Set(engine.terms(text).map(foldTerm).filter(t => t.length >= 3 && !EVENT_WORDS.has(t)))]
}

/** Whether a post holds one of the focus terms (every post when there is no focus). */
export const onFocus = (post: Pick<Post, 'terms'>, focus: readonly string[]): boolean =>
  focus.length === 0 || post.terms.some(t => focus.includes(foldTerm(t)))

/** Whether a post speaks to the audience: one of its terms, or its location, holds an audience term. */
const forAudience = (post: Post, audience: readonly string[]): boolean =>
  audience.length > 0 && (post.terms.some(t => audience.includes(foldTerm(t))) || audience.some(a => post.location.toLowerCase().includes(a)))

interface Candidate {
  kind: QuestionKind
  key: string
  question: string
  score: number
  why: string
  posts: Post[]
  evidence: Array<{ cite: number, text: string }>
}

export interface AnticipationInput {
  engine: LanguageEngine
  kb: KbLike
  posts: readonly Post[]
  commitments: Iterable<Commitment>
  focus: readonly string[]
  /** The issues of the lexicon the focus raises: a commitment on one of them is on the focus. */
  focusIssues: readonly string[]
  audience: readonly string[]
  /** The day of the event (YYYY-MM-DD): what is overdue or due soon is counted from it. */
  day: string
  sources: SourceList
  limit: number
}

/** Questions asked in posts (sentences ending with "?" and two content terms or more), grouped when alike. */
function askedQuestions (engine: LanguageEngine, posts: readonly Post[], sources: SourceList): Candidate[] {
  const groups: Array<{ question: string, asked: Array<{ post: Post, sentence: string }> }> = []
  for (const post of posts) {
    for (const raw of engine.sentences(post.text)) {
      const sentence = raw.trim()
      if (!sentence.endsWith('?') || engine.terms(sentence).length < 2) continue
      const group = groups.find(g => engine.similarity(g.question, sentence) >= SAME_QUESTION)
      if (group === undefined) groups.push({ question: sentence, asked: [{ post, sentence }] })
      else if (!group.asked.some(a => a.post.post_id === post.post_id)) group.asked.push({ post, sentence })
    }
  }
  return groups.map(({ question, asked }) => {
    const askers = new Set(asked.map(a => a.post.author !== '' ? a.post.author : a.post.post_id)).size
    return {
      kind: 'asked' as const,
      key: question.toLowerCase(),
      question,
      score: 0.5 + 0.5 * Math.min(1, (askers - 1) / 4),
      why: `asked in ${plural(asked.length, 'post')} by ${askers} ${askers === 1 ? 'person' : 'people'}`,
      posts: asked.map(a => a.post),
      evidence: asked.slice(0, EVIDENCE_ITEMS).map(a => ({ cite: sources.post(a.post), text: a.sentence }))
    }
  })
}

/** The sentence of a post that best carries its sentiment (the most negative with three content terms or more). */
function tellingSentence (engine: LanguageEngine, text: string): string {
  const sentences = engine.sentences(text).map(s => s.trim()).filter(s => engine.terms(s).length >= 3)
  if (sentences.length === 0) return text.trim()
  return sentences.map(s => ({ s, p: engine.sentiment(s).polarity })).sort((a, b) => a.p - b.p)[0].s
}

/** Negative narratives (mean polarity ≤ −0.05) and loud ones (at least 5 posts and 20 % of the posts). */
function narrativeQuestions (engine: LanguageEngine, posts: readonly Post[], sources: SourceList): Candidate[] {
  return extractNarratives(posts, { minPosts: 3, minSources: 1 }).flatMap(narrative => {
    const negative = narrative.mean_polarity <= -0.05
    const loud = narrative.post_count >= Math.max(5, 0.2 * posts.length)
    if (!negative && !loud) return []
    const carried = posts.filter(p => carries(p, narrative.terms)).sort((a, b) => a.polarity - b.polarity)
    const terms = narrative.terms.slice(0, 3).join(', ')
    const question = negative
      ? `What do you say to people who say “${quoteClaim(tellingSentence(engine, carried[0].text))}”?`
      : `Everyone is talking about ${terms}: what is your position?`
    return [{
      kind: 'narrative' as const,
      key: narrative.narrative_id,
      question,
      score: Math.min(1, 0.3 + 0.4 * Math.min(1, Math.max(0, -narrative.mean_polarity) / 0.5) + 0.3 * Math.min(1, narrative.post_count / 10)),
      why: `a ${negative ? 'negative' : 'loud'} narrative (${terms}) carried by ${plural(narrative.post_count, 'post')} from ${plural(narrative.sources.length, 'source')}, mean polarity ${narrative.mean_polarity}`,
      posts: carried,
      evidence: carried.slice(0, EVIDENCE_ITEMS).map(p => ({ cite: sources.post(p), text: tellingSentence(engine, p.text) }))
    }]
  })
}

/** Issues the posts raise with a negative polarity, by urgency (local issues' method). */
function issueQuestions (engine: LanguageEngine, posts: readonly Post[], sources: SourceList): Candidate[] {
  const { issues } = analyzeLocalIssues(engine, posts.map(p => ({ text: p.text, location: p.location })))
  return issues.filter(issue => issue.polarity < 0).map(issue => {
    const place = issue.places[0]?.place
    const quoted = issue.quotes.flatMap(q => {
      const post = posts.find(p => p.text.includes(q.text))
      return post === undefined ? [] : [{ post, text: q.text }]
    })
    return {
      kind: 'local-issue' as const,
      key: issue.issue,
      question: `What will you do about ${issue.issue}${place !== undefined ? ` in ${place}` : ''}?`,
      score: Math.min(1, 0.3 + 1.4 * issue.urgency),
      why: `${issue.mentions} of ${plural(posts.length, 'post')} raise ${issue.issue} (urgency ${issue.urgency}, polarity ${issue.polarity})`,
      posts: quoted.map(q => q.post),
      evidence: quoted.map(q => ({ cite: sources.post(q.post), text: q.text }))
    }
  })
}

/** Topics the posts' authors split on (the faction mapper's divisive topics), the most divided first. */
function tensionQuestions (engine: LanguageEngine, posts: readonly Post[], sources: SourceList): Candidate[] {
  const actors = postActors(posts, 1)
  if (actors.length < 2) return []
  const table = stanceTable(engine, actors)
  return findConsensus(table).divisive.slice(0, 3).map(topic => {
    const sides = [topic.support[0], topic.oppose[0]].flatMap(name => {
      const position = table.positions.get(name)?.get(topic.topic)
      const sentence = position === undefined ? undefined : stanceEvidence(position, 1)[0]
      const post = sentence === undefined ? undefined : posts.find(p => p.author === name && p.text.includes(sentence))
      return post === undefined || sentence === undefined ? [] : [{ post, text: sentence }]
    })
    return {
      kind: 'tension' as const,
      key: topic.topic,
      question: `Where do you stand on ${topic.topic}? People are split: ${topic.support.length} for, ${topic.oppose.length} against.`,
      score: 0.3 + 0.5 * topic.division,
      why: `${topic.actors} authors mention ${topic.topic}: ${topic.support.length} support, ${topic.oppose.length} oppose (division ${topic.division})`,
      posts: sides.map(s => s.post),
      evidence: sides.map(s => ({ cite: sources.post(s.post), text: s.text }))
    }
  })
}

const possessive = (actor: string): string => /^(?:i|we|my|our)\b/i.test(actor) ? 'your' : `${actor}'s`

/** Commitments broken, overdue on the day, or due within DUE_SOON_DAYS of it, on the focus (a focus term, or an issue of the focus). */
function commitmentQuestions (engine: LanguageEngine, commitments: Iterable<Commitment>, focus: readonly string[], focusIssues: readonly string[], day: string, sources: SourceList): Candidate[] {
  const soon = shiftDay(day, DUE_SOON_DAYS)
  const found: Candidate[] = []
  for (const c of commitments) {
    const onTopic = focus.length === 0 || engine.terms(c.text).some(t => focus.includes(foldTerm(t))) || findIssues(c.text).some(i => focusIssues.includes(i.issue))
    if (!onTopic) continue
    const overdue = isOverdue(c, day)
    const dueSoon = !overdue && c.status !== 'kept' && c.due_on !== null && c.due_on <= soon
    if (c.status !== 'broken' && !overdue && !dueSoon) continue
    const state = c.status === 'broken' ? 'broken' : overdue ? `overdue since ${c.due_on as string}` : `due ${c.due_on as string}`
    const cite = sources.add('commitment', c.commitment_id, `commitment by ${c.actor}, said ${c.said_on}${c.source !== '' ? ` (${c.source})` : ''}: “${c.text}” — ${c.status}${overdue ? `, overdue since ${c.due_on as string}` : ''}`)
    found.push({
      kind: 'commitment',
      key: c.commitment_id,
      question: dueSoon ? `Will ${possessive(c.actor)} promise to ${c.promise} be kept by ${c.due_on as string}?` : `What happened to ${possessive(c.actor)} promise to ${c.promise}?`,
      score: c.status === 'broken' ? 0.9 : overdue ? 0.8 : 0.5,
      why: `a commitment ${state} (accountability)`,
      posts: [],
      evidence: [{ cite, text: c.text }]
    })
  }
  return found
}

/** The suggested answer from the knowledge base: the closest sentences of the passages addressing the question, cited. */
export function localAnswer (engine: LanguageEngine, kb: KbLike, question: string, sources: SourceList): SuggestedAnswer {
  const passages = addressingPassages(engine, kb, [question])
  if (passages.length === 0) return { text: NO_ANSWER, found: false, method: 'none', cites: [] }
  const cited = passages.slice(0, ANSWER_SENTENCES).map(p => ({ cite: sources.passage(p), sentence: p.sentence }))
  return { text: cited.map(c => `${c.sentence} [${c.cite}]`).join(' '), found: true, method: 'extractive', cites: cited.map(c => c.cite) }
}

/**
 * The candidates of every kind, scored, on the focus; an audience boosts a candidate by up to half
 * (score × (1 + 0.5 × share of its posts that speak to the audience), at most 1). Ranked by score, then
 * kind, then text; a question as similar as DISTINCT_QUESTION to a better one is dropped.
 */
export function anticipate (input: AnticipationInput): AnticipatedQuestion[] {
  const { engine, posts, sources } = input
  const candidates = [
    ...askedQuestions(engine, posts, sources),
    ...narrativeQuestions(engine, posts, sources),
    ...issueQuestions(engine, posts, sources),
    ...tensionQuestions(engine, posts, sources),
    ...commitmentQuestions(engine, input.commitments, input.focus, input.focusIssues, input.day, sources)
  ].map(c => {
    const share = c.posts.length === 0 ? 0 : c.posts.filter(p => forAudience(p, input.audience)).length / c.posts.length
    return { ...c, score: round(Math.min(1, c.score * (1 + 0.5 * share))) }
  }).sort((a, b) => b.score - a.score || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.question.localeCompare(b.question))
  const kept: Candidate[] = []
  for (const candidate of candidates) {
    if (kept.length === input.limit) break
    if (kept.some(k => engine.similarity(k.question, candidate.question) >= DISTINCT_QUESTION)) continue
    kept.push(candidate)
  }
  return kept.map(c => ({
    question_id: contentId(c.kind, c.key),
    kind: c.kind,
    question: c.question,
    score: c.score,
    why: c.why,
    evidence: c.evidence,
    answer: localAnswer(engine, input.kb, c.question, sources)
  }))
}

/** The prompt asking the provider to answer the questions that have cited passages, as A1: … A2: … */
export function answersPrompt (template: PromptTemplate, context: { event: string, audience: string }, questions: readonly AnticipatedQuestion[], sources: SourceList): ChatMessage[] {
  const blocks = questions.map((q, i) => [
    `Q${i + 1}: ${q.question}`,
    `Why it is likely: ${q.why}`,
    'Sources:',
    ...q.answer.cites.map(cite => `[${cite}] ${sources.items[cite - 1].line}: ${sources.items[cite - 1].text ?? ''}`)
  ].join('\n'))
  return promptMessages(template, {
    event: context.event,
    audience: context.audience,
    labels: questions.map((_, i) => `A${i + 1}`).join(', '),
    questions: blocks.join('\n\n')
  })
}
