// Word-level cues shared by the media, disinfo and regulatory modules: the words of a text, the
// matches of a lexicon pattern kept as evidence, whole-word mentions of a name.

/** Runs of letters and digits (apostrophes and inner hyphens kept), as written. */
export function words (text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []
}

/** Every match of `pattern` (made global if it is not), as written. */
export function matchesOf (text: string, pattern: RegExp): string[] {
  const global = pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`)
  return [...text.matchAll(global)].map(m => m[0])
}

/** Distinct items, case-insensitively, in first-seen order (the first spelling kept). */
export function distinctCi (items: Iterable<string>): string[] {
  const seen = new Map<string, string>()
  for (const item of items) if (!seen.has(item.toLowerCase())) seen.set(item.toLowerCase(), item)
  return [...seen.values()]
}

/** Function words the knowledge base's tokenizer keeps (its stop list is short) but that never make a keyword. */
export const FUNCTION_WORDS = new Set(('about above after again against also although among another around because been before being below ' +
  'between both can could did does doing down during each either else ever few further had having here into just least less like many more ' +
  'most much must new next nor not now off once one only other over own said same says should since some still such than then there ' +
  'these those though through too two under until upon very via was while whom whose would yet').split(' '))

export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Whether `text` names `name` as whole words, case-insensitively. */
export function mentions (text: string, name: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(name)}(?![\\p{L}\\p{N}])`, 'iu').test(text)
}


/** The label of a mean polarity: beyond ±`band` positive or negative, otherwise neutral. */
export function polarityLabel (polarity: number, band = 0.05): 'positive' | 'negative' | 'neutral' {
  return polarity > band ? 'positive' : polarity < -band ? 'negative' : 'neutral'
}

/** "1 post", "3 posts": a count and its word, with a plural -s. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`
