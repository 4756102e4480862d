// The media monitor's method: one article's analysis (summary, entities and the sentiment toward each,
// keywords, tone), whether an article matches a topic, and the comparison of outlets' coverage
// (article counts, mean sentiment, entity shares, distinctive keywords, pairwise similarity).
import { type Entities, type LanguageEngine, type RankedTerm, type Sentiment, type SummarySentence, opensWithContrast, turnsFromPrevious, cosine, mean, polarityOf, round, termCounts, FUNCTION_WORDS, mentions, polarityLabel, words } from '../../module-kit.js'

export type Tone = 'factual' | 'favourable' | 'critical' | 'mixed'

export interface EntitySentiment {
  entity: string
  kind: 'person' | 'organization' | 'place'
  /** Sentences naming the entity (a person also by surname). */
  mentions: number
  /** Mean polarity of those sentences. */
  polarity: number
  label: 'positive' | 'negative' | 'neutral'
}

export interface ArticleAnalysis {
  language: string
  word_count: number
  summary: SummarySentence[]
  entities: Entities
  sentiment: Pick<Sentiment, 'score' | 'polarity' | 'label'> & { mean_sentence_polarity: number, opinion_balance: number, opinionated_share: number, opinion_density: number }
  entity_sentiment: EntitySentiment[]
  keywords: RankedTerm[]
  key_phrases: RankedTerm[]
  tone: Tone
}

/**
 * Below this opinion density (the mean |score| of its sentences) an article is factual: a stray
 * "agreed" or "secure" in a report of dates and procedures does not make it an opinion piece.
 */
export const FACTUAL_BELOW = 0.6
/**
 * An opinion balance (the sentences' polarities summed over the sum of their absolute values) at or
 * beyond ±this is favourable or critical, in between mixed: one side must weigh at least twice the
 * other. Sentences without opinion weigh nothing, so reported facts do not dilute a verdict.
 */
export const TONE_BAND = 1 / 3
/** Distinct terms kept per stored article (the most frequent), for topics and comparisons. */
export const STORED_TERMS = 1000
/** Share of a topic's distinct terms an article must hold to match it. */
export const TOPIC_MATCH = 0.5

/**
 * An article's tone from its opinion balance and density; an article that turns from one side to the
 * other ("…praised the bins. In two wards, however, residents complained…") gives both weight: mixed.
 */
export function toneOf (balance: number, opinionDensity: number, turned = false): Tone {
  if (opinionDensity < FACTUAL_BELOW) return 'factual'
  if (turned) return 'mixed'
  return balance >= TONE_BAND ? 'favourable' : balance <= -TONE_BAND ? 'critical' : 'mixed'
}

/** The polarities' sum over the sum of their absolute values, in [−1, 1]; 0 without opinion. */
export function opinionBalance (polarities: readonly number[]): number {
  const weight = polarities.reduce((sum, p) => sum + Math.abs(p), 0)
  return weight === 0 ? 0 : polarities.reduce((sum, p) => sum + p, 0) / weight
}

/** The sentences naming an entity: the full name, and for a person also the surname (last word, 3+ letters). */
function namesOf (entity: string, kind: EntitySentiment['kind']): string[] {
  const surname = entity.split(' ').at(-1) ?? entity
  return kind === 'person' && surname !== entity && surname.length >= 3 ? [entity, surname] : [entity]
}

/** Whether a sentence with an opinion turns ("However, …", "At the same time, …") against the last opinion before it. */
function turnsBetweenSides (sentences: readonly string[], moods: readonly Sentiment[]): boolean {
  let last = ''
  return sentences.some((sentence, i) => {
    const label = moods[i].label
    if (label === 'neutral') return false
    const turned = last !== '' && label !== last && turnsFromPrevious(sentence)
    last = label
    return turned
  })
}

export function analyzeArticle (engine: LanguageEngine, title: string, text: string): ArticleAnalysis {
  const sentences = engine.sentences(text)
  const moods = sentences.map(s => engine.sentiment(s))
  // A sentence opening with "However," or "But" is read with the one before: its score is what it adds to the pair.
  const scores = moods.map((m, i) => i > 0 && opensWithContrast(sentences[i]) ? engine.sentiment(`${sentences[i - 1]} ${sentences[i]}`).score - moods[i - 1].score : m.score)
  const polarities = scores.map(polarityOf)
  const opinionated = sentences.length === 0 ? 0 : moods.filter(m => m.label !== 'neutral').length / sentences.length
  const density = mean(scores.map(Math.abs))
  const meanPolarity = mean(polarities)
  const balance = opinionBalance(polarities)
  const entities = engine.entities(text)
  const named: Array<[string, EntitySentiment['kind']]> = [
    ...entities.people.map(e => [e, 'person'] as [string, EntitySentiment['kind']]),
    ...entities.organizations.map(e => [e, 'organization'] as [string, EntitySentiment['kind']]),
    ...entities.places.map(e => [e, 'place'] as [string, EntitySentiment['kind']])
  ]
  const entitySentiment = named.map(([entity, kind]) => {
    const names = namesOf(entity, kind)
    const about = sentences.flatMap((s, i) => names.some(n => mentions(s, n)) ? [polarities[i]] : [])
    const polarity = round(mean(about))
    return { entity, kind, mentions: about.length, polarity, label: polarityLabel(polarity) }
  }).filter(e => e.mentions > 0)
  const whole = engine.sentiment(text)
  return {
    language: engine.language(`${title}. ${text}`).language,
    word_count: words(text).length,
    summary: engine.summarize(text, 3),
    entities,
    sentiment: { score: whole.score, polarity: whole.polarity, label: whole.label, mean_sentence_polarity: round(meanPolarity), opinion_balance: round(balance), opinionated_share: round(opinionated), opinion_density: round(density) },
    entity_sentiment: entitySentiment.sort((a, b) => b.mentions - a.mentions || a.entity.localeCompare(b.entity)),
    keywords: engine.keywords(text, 10),
    key_phrases: engine.keyPhrases(text, 8),
    tone: toneOf(balance, density, turnsBetweenSides(sentences, moods))
  }
}

/** The most frequent `STORED_TERMS` distinct terms of title and text, with their counts. */
export function storedTerms (engine: LanguageEngine, title: string, text: string): Record<string, number> {
  const counts = [...termCounts(engine.terms(`${title} ${text}`))].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  return Object.fromEntries(counts.slice(0, STORED_TERMS))
}

/** The share of the topic's distinct terms the article holds (0 to 1). */
export function topicRelevance (topicTerms: readonly string[], articleTerms: Readonly<Record<string, number>>): number {
  const distinct = [...new Set(topicTerms)]
  return distinct.length === 0 ? 1 : round(distinct.filter(t => t in articleTerms).length / distinct.length)
}

/** What the comparison needs of a stored article. */
export interface CoverageArticle {
  outlet: string
  polarity: number
  entities: string[]
  terms: Readonly<Record<string, number>>
}

export interface DistinctiveTerm { term: string, count: number, share: number, elsewhere: number, distinctiveness: number }

export interface OutletCoverage {
  outlet: string
  article_count: number
  /** Mean over the outlet's articles of their mean sentence polarity. */
  mean_sentiment: number
  label: 'positive' | 'negative' | 'neutral'
  /** Entities by the share of the outlet's articles naming them. */
  entities: Array<{ entity: string, articles: number, share: number }>
  distinctive_keywords: DistinctiveTerm[]
}

/** Terms that can be keywords: three or more characters, not a number (the engine's keyword rule), not a function word. */
const keywordTerm = (term: string): boolean => term.length >= 3 && !/^\d+$/.test(term) && !FUNCTION_WORDS.has(term)

function addCounts (into: Map<string, number>, terms: Readonly<Record<string, number>>): void {
  for (const [term, count] of Object.entries(terms)) into.set(term, (into.get(term) ?? 0) + count)
}

const total = (counts: ReadonlyMap<string, number>): number => [...counts.values()].reduce((sum, x) => sum + x, 0)

/**
 * Outlets' coverage compared: per outlet the article count, mean sentiment, entity shares and the
 * keywords distinctive to it, share in outlet − share elsewhere (share = the term's count over all
 * term counts of those articles); and the cosine similarity of every two outlets' summed term counts.
 */
export function compareOutlets (articles: readonly CoverageArticle[], keywordLimit = 8, entityLimit = 8): {
  outlets: OutletCoverage[]
  similarity: Array<{ a: string, b: string, similarity: number }>
} {
  const byOutlet = new Map<string, CoverageArticle[]>()
  for (const article of articles) byOutlet.set(article.outlet, [...(byOutlet.get(article.outlet) ?? []), article])
  const counts = new Map<string, Map<string, number>>()
  const all = new Map<string, number>()
  for (const [outlet, list] of byOutlet) {
    const own = new Map<string, number>()
    for (const article of list) addCounts(own, article.terms)
    counts.set(outlet, own)
    addCounts(all, Object.fromEntries(own))
  }
  const allTotal = total(all)
  const outlets = [...byOutlet].map(([outlet, list]): OutletCoverage => {
    const own = counts.get(outlet) as Map<string, number>
    const ownTotal = total(own)
    const otherTotal = allTotal - ownTotal
    const distinctive = [...own].filter(([term]) => keywordTerm(term)).map(([term, count]) => {
      const share = count / ownTotal
      const elsewhere = otherTotal === 0 ? 0 : ((all.get(term) ?? 0) - count) / otherTotal
      return { term, count, share: round(share, 4), elsewhere: round(elsewhere, 4), distinctiveness: round(share - elsewhere, 4) }
    }).filter(d => d.distinctiveness > 0)
      .sort((a, b) => b.distinctiveness - a.distinctiveness || b.count - a.count || a.term.localeCompare(b.term))
      .slice(0, keywordLimit)
    const named = new Map<string, number>()
    for (const article of list) for (const entity of new Set(article.entities)) named.set(entity, (named.get(entity) ?? 0) + 1)
    const sentiment = round(mean(list.map(a => a.polarity)))
    return {
      outlet,
      article_count: list.length,
      mean_sentiment: sentiment,
      label: polarityLabel(sentiment),
      entities: [...named].map(([entity, n]) => ({ entity, articles: n, share: round(n / list.length) }))
        .sort((a, b) => b.articles - a.articles || a.entity.localeCompare(b.entity)).slice(0, entityLimit),
      distinctive_keywords: distinctive
    }
  }).sort((a, b) => b.article_count - a.article_count || a.outlet.localeCompare(b.outlet))
  const names = outlets.map(o => o.outlet)
  const similarity = names.flatMap((a, i) => names.slice(i + 1).map(b => ({
    a, b, similarity: round(cosine(counts.get(a) as Map<string, number>, counts.get(b) as Map<string, number>))
  })))
  return { outlets, similarity }
}
