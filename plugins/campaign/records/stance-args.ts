// Arguments of the stance modules (coalition detector, faction mapper) and of the modules reading the
// post stream over a time range: speaker lists with distinct names and bounded statements, the range
// checks, and the actors of the post stream (its authors with enough posts).
import type { TArray } from '@sinclair/typebox'
import { BadRequest } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import { checkText, TextArg, timeRange, TimeRangeArgs } from '../modules/kit.js'
import type { Post } from './posts.js'
import type { Speaker } from '../text/stance.js'

/** Most statements of one speaker. */
export const MAX_STATEMENTS = 200
/** Most actors taken from the post stream (the most active authors). */
export const MAX_POST_ACTORS = 100
/** Most posts of one author taken as statements (the latest). */
export const MAX_POSTS_PER_ACTOR = 20

const SpeakerArg = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  statements: Type.Array(TextArg('a statement, a post or a position'), { minItems: 1, maxItems: MAX_STATEMENTS })
}, { additionalProperties: false })

/** Between `min` and `max` speakers, each `{name, statements}`. */
export const SpeakersArg = (min: number, max: number): TArray<typeof SpeakerArg> => Type.Array(SpeakerArg, { minItems: min, maxItems: max })

/** 400 for a blank or repeated name (case-insensitive), 413 for a statement over the text limit. */
export function checkSpeakers (field: string, speakers: readonly Speaker[]): Speaker[] {
  const seen = new Set<string>()
  return speakers.map((speaker, i) => {
    const name = speaker.name.trim()
    if (name === '') throw new BadRequest(`invalid arguments: /${field}/${i}/name: must not be blank`)
    if (seen.has(name.toLowerCase())) throw new BadRequest(`invalid arguments: /${field}/${i}/name: ${JSON.stringify(name)} is named twice`)
    seen.add(name.toLowerCase())
    speaker.statements.forEach((text, j) => { checkText(`${field}/${i}/statements/${j}`, text) })
    return { name, statements: speaker.statements }
  })
}

export const RangeArgs = {
  ...TimeRangeArgs,
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only posts of this source' }))
}

export interface Range { from?: Date, to?: Date, source?: string }

/**
 * The range's times; 400 naming the field when one is not ISO 8601, when `to` comes before `from`, or
 * when texts of their own (`given`, named `field`) come with a range, which applies to the post stream only.
 */
export function postRange (args: { from?: string, to?: string, source?: string }, field: string, given: boolean): Range {
  const stray = (['from', 'to', 'source'] as const).find(key => args[key] !== undefined)
  if (given && stray !== undefined) throw new BadRequest(`invalid arguments: /${stray}: reads the post stream, which is not read when ${field} are given`)
  return { ...timeRange(args), source: args.source }
}

/**
 * The post stream's actors: authors (non-empty) with at least `minPosts` posts, the most active
 * MAX_POST_ACTORS (ties by name), each with its latest MAX_POSTS_PER_ACTOR posts as statements.
 */
export function postActors (posts: Iterable<Post>, minPosts: number): Speaker[] {
  const byAuthor = new Map<string, string[]>()
  for (const post of posts) {
    const author = post.author.trim()
    if (author === '') continue
    const texts = byAuthor.get(author) ?? []
    texts.push(post.text)
    byAuthor.set(author, texts)
  }
  return [...byAuthor].filter(([, texts]) => texts.length >= minPosts)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .slice(0, MAX_POST_ACTORS)
    .map(([name, texts]) => ({ name, statements: texts.slice(-MAX_POSTS_PER_ACTOR) }))
}
