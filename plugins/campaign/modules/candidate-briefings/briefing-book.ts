// Candidate briefings' method: a briefing book on a subject assembled from what the app knows — the
// knowledge base (cited), sentiment and narratives of the post stream, stored media coverage, open
// commitments — with the questions the candidate is likely to be asked and each section's sources.
import { type LanguageEngine, mean, round, type KbLike, type RecordStore, groundedSentences, nothingInKb, type Citations, type GroundedSentence, type Post, polarityLabel } from '../../module-kit.js'
import { isOverdue, type Commitment } from '../accountability/index.js'
import type { Tone, StoredArticle } from '../media-monitor/index.js'
import { extractNarratives } from '../narrative-contagion/index.js'
import { articleLine, commitmentLine, polarityToward, postLine, type Coverage } from './app-records.js'

/** Most questions, narratives, articles and commitments listed; sentences of the background. */
export const MAX_QUESTIONS = 6
export const MAX_NARRATIVES = 3
export const MAX_ARTICLES = 5
export const MAX_COMMITMENTS = 8
export const BACKGROUND = { passages: 4, perPassage: 2, total: 5 }
/** A post stream or narrative at this mean polarity or lower is critical. */
export const CRITICAL = -0.1

interface PostQuote { post_id: string, text: string, source: string, posted_at: string, polarity: number }

export interface BriefingSections {
  background: { sentences: GroundedSentence[], sources: string[], note?: string }
  sentiment: {
    posts: number, positive: number, negative: number, neutral: number, mean_polarity: number, label: string
    by_day: Array<{ day: string, count: number, mean_polarity: number }>
    by_source: Array<{ source: string, count: number, mean_polarity: number }>
    most_negative: PostQuote | null, most_positive: PostQuote | null, sources: string[]
  }
  narratives: { items: Array<{ narrative_id: string, label: string, terms: string[], post_count: number, mean_polarity: number, sample: string }>, sources: string[] }
  media: {
    matched: number, tones: Record<Tone, number>
    items: Array<{ article_id: string, title: string, outlet: string, url: string, published_at: string, tone: Tone, polarity: number, summary: string }>
    sources: string[]
  }
  commitments: {
    open: number, in_progress: number, broken: number, overdue: number
    items: Array<{ commitment_id: string, actor: string, text: string, due_on: string | null, status: string, overdue: boolean, due_by_date: boolean }>
    sources: string[]
  }
  likely_questions: { items: Question[], sources: string[] }
}

export interface Question { question: string, basis: string, context?: string, answer_points: GroundedSentence[] }

export interface AttendeeNotes { name: string, notes: Array<{ text: string, source: string }> }

export interface BriefingData {
  subject: string
  /** YYYY-MM-DD of the event, or null. */
  date: string | null
  days: number
  posts: readonly Post[]
  /** The subject's terms, left out of the narratives (every post about it holds them). */
  terms: readonly string[]
  coverage: Coverage
  commitments: readonly Commitment[]
  today: string
}

const quote = (p: Post): PostQuote => ({ post_id: p.post_id, text: p.text, source: p.source, posted_at: p.posted_at, polarity: p.polarity })

function grouped<K> (posts: readonly Post[], key: (p: Post) => K): Array<[K, Post[]]> {
  const groups = new Map<K, Post[]>()
  for (const post of posts) groups.set(key(post), [...(groups.get(key(post)) ?? []), post])
  return [...groups]
}

export function sentimentSection (posts: readonly Post[]): BriefingSections['sentiment'] {
  const polarity = round(mean(posts.map(p => p.polarity)))
  const ordered = [...posts].sort((a, b) => a.polarity - b.polarity || a.posted_at.localeCompare(b.posted_at))
  const most = { negative: ordered.find(p => p.polarity < 0), positive: [...ordered].reverse().find(p => p.polarity > 0) }
  return {
    posts: posts.length,
    positive: posts.filter(p => p.label === 'positive').length,
    negative: posts.filter(p => p.label === 'negative').length,
    neutral: posts.filter(p => p.label === 'neutral').length,
    mean_polarity: polarity,
    label: polarityLabel(polarity),
    by_day: grouped(posts, p => p.posted_at.slice(0, 10)).map(([day, held]) => ({ day, count: held.length, mean_polarity: round(mean(held.map(p => p.polarity))) })).sort((a, b) => a.day.localeCompare(b.day)),
    by_source: grouped(posts, p => p.source).map(([source, held]) => ({ source, count: held.length, mean_polarity: round(mean(held.map(p => p.polarity))) }))
      .sort((a, b) => b.count - a.count || a.source.localeCompare(b.source)).slice(0, 5),
    most_negative: most.negative === undefined ? null : quote(most.negative),
    most_positive: most.positive === undefined ? null : quote(most.positive),
    sources: [most.negative, most.positive].filter(p => p !== undefined).map(postLine)
  }
}

/** The narratives among the subject's posts, the subject's own terms left out (else it would be the only narrative). */
export function narrativeSection (posts: readonly Post[], subjectTerms: readonly string[]): BriefingSections['narratives'] {
  const own = new Set(subjectTerms)
  const found = extractNarratives(posts.map(p => ({ ...p, terms: p.terms.filter(t => !own.has(t)) })), { minPosts: 2, minSources: 1 }).slice(0, MAX_NARRATIVES)
  return {
    items: found.map(n => ({ narrative_id: n.narrative_id, label: n.label, terms: n.terms, post_count: n.post_count, mean_polarity: n.mean_polarity, sample: n.sample_posts[0]?.text ?? '' })),
    sources: found.flatMap(n => n.sample_posts.slice(0, 1).map(postLine))
  }
}

export function mediaSection (coverage: Coverage, subject: string): BriefingSections['media'] {
  const tones: Record<Tone, number> = { favourable: 0, critical: 0, mixed: 0, factual: 0 }
  const items = coverage.newest.slice(0, MAX_ARTICLES)
  for (const a of coverage.newest) tones[a.tone]++
  return {
    matched: coverage.matched,
    tones,
    items: items.map(a => ({ article_id: a.article_id, title: a.title, outlet: a.outlet, url: a.url, published_at: a.published_at, tone: a.tone, polarity: polarityToward(a, subject), summary: a.summary[0]?.text ?? '' })),
    sources: items.map(articleLine)
  }
}

/** Commitments not kept: overdue first, then by due date (undated last), then newest. */
export function commitmentSection (commitments: readonly Commitment[], today: string, date: string | null): BriefingSections['commitments'] {
  const open = commitments.filter(c => c.status !== 'kept')
  const items = open.map(c => ({ c, overdue: isOverdue(c, today) }))
    .sort((a, b) => Number(b.overdue) - Number(a.overdue) || (a.c.due_on ?? '9999').localeCompare(b.c.due_on ?? '9999') || b.c.recorded_at.localeCompare(a.c.recorded_at))
    .slice(0, MAX_COMMITMENTS)
  return {
    open: commitments.filter(c => c.status === 'open').length,
    in_progress: commitments.filter(c => c.status === 'in_progress').length,
    broken: commitments.filter(c => c.status === 'broken').length,
    overdue: open.filter(c => isOverdue(c, today)).length,
    items: items.map(({ c, overdue }) => ({ commitment_id: c.commitment_id, actor: c.actor, text: c.text, due_on: c.due_on, status: c.status, overdue, due_by_date: date !== null && c.due_on !== null && c.due_on <= date })),
    sources: items.map(({ c }) => commitmentLine(c))
  }
}

/**
 * Likely questions, in this order, at most MAX_QUESTIONS (the last always the position question):
 * overdue commitments, broken ones, open ones due by the event's date, critical articles, critical
 * narratives, a critical post stream; then "What is your position on <subject>?". Each has answer
 * points: knowledge-base sentences on what it is about.
 */
export function likelyQuestions (engine: LanguageEngine, kb: KbLike, citations: Citations, subject: string, s: Omit<BriefingSections, 'background' | 'likely_questions'>): BriefingSections['likely_questions'] {
  const raised: Array<Omit<Question, 'answer_points'> & { about: string }> = []
  for (const c of s.commitments.items.filter(c => c.overdue)) raised.push({ question: `“${c.text}” was due on ${c.due_on ?? ''}. Why is it late, and when will it be done?`, basis: `commitment ${c.commitment_id}`, about: c.text })
  for (const c of s.commitments.items.filter(c => c.status === 'broken')) raised.push({ question: `Why was “${c.text}” not kept?`, basis: `commitment ${c.commitment_id}`, about: c.text })
  for (const c of s.commitments.items.filter(c => c.due_by_date && !c.overdue && c.status !== 'broken')) raised.push({ question: `Will “${c.text}” be done by ${c.due_on ?? ''}?`, basis: `commitment ${c.commitment_id}`, about: c.text })
  for (const a of s.media.items.filter(a => a.tone === 'critical' || a.polarity <= CRITICAL)) raised.push({ question: `${a.outlet} reported “${a.title}”. What is your response?`, basis: `article ${a.article_id}`, context: a.summary, about: `${subject} ${a.title}` })
  for (const n of s.narratives.items.filter(n => n.mean_polarity <= CRITICAL)) raised.push({ question: `People are posting about ${n.terms.join(', ')} (${n.post_count} posts, mostly critical). What do you say to them?`, basis: `narrative ${n.narrative_id}`, context: n.sample, about: `${subject} ${n.terms.join(' ')}` })
  if (s.sentiment.posts >= 3 && s.sentiment.mean_polarity <= CRITICAL && s.sentiment.most_negative !== null) {
    raised.push({ question: `Most posts about ${subject} are critical (${s.sentiment.negative} of ${s.sentiment.posts}). What will you do about it?`, basis: postLine(s.sentiment.most_negative), context: s.sentiment.most_negative.text, about: subject })
  }
  const asked = [...raised.slice(0, MAX_QUESTIONS - 1), { question: `What is your position on ${subject}?`, basis: 'knowledge base', about: subject }]
  const items = asked.map(({ about, ...q }) => ({ ...q, answer_points: groundedSentences(engine, kb, about, { passages: 2, perPassage: 1, total: 2 }, citations) }))
  return { items, sources: [...new Set([...items.map(q => q.basis).filter(b => b !== 'knowledge base'), ...citations.linesOf(items.flatMap(q => q.answer_points.map(p => p.cite)))])] }
}

/** Every section of the briefing book, cited under one numbering. */
export function briefingSections (engine: LanguageEngine, kb: KbLike, citations: Citations, data: BriefingData): BriefingSections {
  const sentences = groundedSentences(engine, kb, data.subject, BACKGROUND, citations)
  const background = { sentences, sources: citations.linesOf(sentences.map(s => s.cite)), ...(sentences.length === 0 ? { note: nothingInKb(data.subject) } : {}) }
  const rest = {
    sentiment: sentimentSection(data.posts),
    narratives: narrativeSection(data.posts, data.terms),
    media: mediaSection(data.coverage, data.subject),
    commitments: commitmentSection(data.commitments, data.today, data.date)
  }
  return { background, ...rest, likely_questions: likelyQuestions(engine, kb, citations, data.subject, rest) }
}

/** The summary of the extractive briefing: one factual line per section. */
export function summaryLines (data: Pick<BriefingData, 'subject' | 'date' | 'days'>, s: BriefingSections): string[] {
  const lines = [`${data.subject}${data.date !== null ? `, ${data.date}` : ''}.`]
  lines.push(s.background.sentences.length > 0 ? `Knowledge base: ${new Set(s.background.sentences.map(x => x.cite)).size} passage(s) cited.` : `Nothing in the knowledge base on ${data.subject}.`)
  lines.push(s.sentiment.posts > 0
    ? `Posts of the last ${data.days} days: ${s.sentiment.posts} (${s.sentiment.negative} negative, ${s.sentiment.positive} positive; mean polarity ${s.sentiment.mean_polarity}, ${s.sentiment.label}).`
    : `No post about it in the last ${data.days} days.`)
  if (s.narratives.items.length > 0) lines.push(`Narratives: ${s.narratives.items.map(n => `${n.label} (${n.post_count} posts)`).join('; ')}.`)
  lines.push(s.media.matched > 0 ? `Media: ${s.media.matched} article(s), ${s.media.tones.critical} critical and ${s.media.tones.favourable} favourable among the newest.` : 'No stored article covers it.')
  const open = s.commitments.open + s.commitments.in_progress
  if (open + s.commitments.broken > 0) lines.push(`Commitments: ${open} open (${s.commitments.overdue} overdue), ${s.commitments.broken} broken.`)
  lines.push(`${s.likely_questions.items.length} likely question(s) to prepare.`)
  return lines
}

/** Notes on each attendee: their latest two commitments, the newest two articles naming them as a person or organisation, the first knowledge-base sentence naming them (cited). */
export async function attendeeNotes (engine: LanguageEngine, kb: KbLike, citations: Citations, attendees: readonly string[], commitments: readonly Commitment[], articles: RecordStore<StoredArticle>): Promise<AttendeeNotes[]> {
  const all: AttendeeNotes[] = []
  // One at a time: citations are numbered in the order attendees are given.
  for (const name of attendees) {
    const needle = name.toLowerCase()
    const notes: AttendeeNotes['notes'] = []
    for (const c of commitments.filter(c => c.actor.toLowerCase().includes(needle)).slice(-2).reverse()) notes.push({ text: `Committed: “${c.text}” (${c.status})`, source: commitmentLine(c) })
    for (const a of (await articles.page(2, undefined, a => [...a.entities.people, ...a.entities.organizations].some(e => e.toLowerCase().includes(needle)))).items) {
      notes.push({ text: `In the news: “${a.title}” (${a.outlet}, ${a.tone})`, source: articleLine(a) })
    }
    for (const hit of kb.query(name, 3)) {
      const sentence = engine.sentences(hit.text).find(x => x.toLowerCase().includes(needle))
      if (sentence === undefined) continue
      const cite = citations.cite(hit)
      notes.push({ text: `${sentence.trim()} [${cite}]`, source: citations.linesOf([cite])[0] })
      break
    }
    all.push({ name, notes })
  }
  return all
}
