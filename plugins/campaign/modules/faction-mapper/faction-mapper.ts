// Faction mapper: map-factions builds the stance graph of actors (given, or the post stream's authors)
// — edges weighted by the cosine similarity of their stances on shared topics — and takes its
// connected components over strong edges as factions; consensus-finder finds settled and divisive topics.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, round, type ModuleKit, stanceSign, stanceTable, type Speaker, type StanceTable, checkSpeakers, postActors, postRange, RangeArgs, SpeakersArg } from '../../module-kit.js'

/** An edge this similar joins two actors into one faction. */
export const MIN_SIMILARITY = 0.5
/** Opinionated topics two actors must share for their edge to join them. */
export const MIN_SHARED = 2
/** Share of the actors mentioning a topic that must take one side for a consensus. */
export const CONSENSUS_SHARE = 0.75
/** Share each side must reach for a topic to be divisive. */
export const DIVISIVE_SHARE = 0.25

export interface Edge { a: string, b: string, weight: number, shared_topics: number }

export interface Faction {
  faction_id: string
  members: string[]
  /** Topics mentioned by at least half the members (two at least): their mean stance, strongest first. */
  positions: Array<{ topic: string, stance: number, members: number }>
}

/** Cosine of two actors' stances over the topics both hold an opinion on; `shared` counts those topics. */
export function stanceSimilarity (table: StanceTable, a: string, b: string): { weight: number, shared: number } {
  const mine = table.positions.get(a) ?? new Map()
  const theirs = table.positions.get(b) ?? new Map()
  let dot = 0
  let normA = 0
  let normB = 0
  let shared = 0
  for (const [topic, pa] of mine) {
    const pb = theirs.get(topic)
    if (pb === undefined || pa.opinionated === 0 || pb.opinionated === 0) continue
    shared++
    dot += pa.stance * pb.stance
    normA += pa.stance ** 2
    normB += pb.stance ** 2
  }
  return { weight: normA === 0 || normB === 0 ? 0 : round(dot / Math.sqrt(normA * normB)), shared }
}

/**
 * Factions: connected components of the graph whose edges have weight ≥ `minSimilarity` over at least
 * MIN_SHARED shared topics. Components of two or more actors are factions, numbered F1, F2… by size,
 * then by their first member in input order; the others are unaligned.
 */
export function mapFactions (table: StanceTable, minSimilarity = MIN_SIMILARITY): { factions: Faction[], edges: Edge[], unaligned: string[] } {
  const names = table.speakers.map(s => s.name)
  const parent = names.map((_, i) => i)
  const root = (i: number): number => parent[i] === i ? i : (parent[i] = root(parent[i]))
  const edges: Edge[] = []
  names.forEach((a, i) => {
    names.slice(i + 1).forEach((b, k) => {
      const { weight, shared } = stanceSimilarity(table, a, b)
      if (shared === 0) return
      edges.push({ a, b, weight, shared_topics: shared })
      if (weight >= minSimilarity && shared >= MIN_SHARED) parent[root(i + 1 + k)] = root(i)
    })
  })
  const components = new Map<number, string[]>()
  names.forEach((name, i) => { components.set(root(i), [...(components.get(root(i)) ?? []), name]) })
  const groups = [...components.values()]
  const factions = groups.filter(members => members.length >= 2)
    .sort((x, y) => y.length - x.length || names.indexOf(x[0]) - names.indexOf(y[0]))
    .map((members, i) => ({ faction_id: `F${i + 1}`, members, positions: factionPositions(table, members) }))
  return { factions, edges, unaligned: groups.filter(members => members.length === 1).flat() }
}

function factionPositions (table: StanceTable, members: readonly string[]): Faction['positions'] {
  return table.topics.flatMap(({ topic }) => {
    const stances = members.flatMap(m => {
      const position = table.positions.get(m)?.get(topic)
      return position !== undefined && position.opinionated > 0 ? [position.stance] : []
    })
    if (stances.length < Math.max(2, members.length / 2)) return []
    return [{ topic, stance: round(stances.reduce((sum, x) => sum + x, 0) / stances.length), members: stances.length }]
  }).sort((x, y) => Math.abs(y.stance) - Math.abs(x.stance) || x.topic.localeCompare(y.topic))
}

export interface TopicSides { topic: string, actors: number, support: string[], oppose: string[], neutral: string[], support_share: number, oppose_share: number, mean_stance: number }

/**
 * Per topic, the actors mentioning it split by the sign of their stance (neutral within ±0.1 or
 * without an opinion). Consensus: one side holds ≥ `minShare` of them. Divisive: each side holds
 * ≥ DIVISIVE_SHARE; ranked by division = 2 · min(support, oppose) / actors.
 */
export function findConsensus (table: StanceTable, minShare = CONSENSUS_SHARE): { consensus: Array<TopicSides & { stance: 'support' | 'oppose', share: number }>, divisive: Array<TopicSides & { division: number }> } {
  const sides: TopicSides[] = table.topics.map(({ topic }) => {
    const support: string[] = []
    const oppose: string[] = []
    const neutral: string[] = []
    const stances: number[] = []
    for (const { name } of table.speakers) {
      const position = table.positions.get(name)?.get(topic)
      if (position === undefined) continue
      stances.push(position.stance)
      const sign = position.opinionated === 0 ? 0 : stanceSign(position.stance)
      ;(sign > 0 ? support : sign < 0 ? oppose : neutral).push(name)
    }
    const actors = stances.length
    return { topic, actors, support, oppose, neutral, support_share: round(support.length / actors), oppose_share: round(oppose.length / actors), mean_stance: round(stances.reduce((s, x) => s + x, 0) / actors) }
  })
  const consensus = sides.filter(s => Math.max(s.support_share, s.oppose_share) >= minShare)
    .map(s => ({ ...s, stance: s.support_share >= s.oppose_share ? 'support' as const : 'oppose' as const, share: Math.max(s.support_share, s.oppose_share) }))
    .sort((x, y) => y.share - x.share || y.actors - x.actors || x.topic.localeCompare(y.topic))
  const divisive = sides.filter(s => s.support_share >= DIVISIVE_SHARE && s.oppose_share >= DIVISIVE_SHARE)
    .map(s => ({ ...s, division: round(2 * Math.min(s.support.length, s.oppose.length) / s.actors) }))
    .sort((x, y) => y.division - x.division || y.actors - x.actors || x.topic.localeCompare(y.topic))
  return { consensus, divisive }
}

const ActorArgs = {
  actors: Type.Optional(SpeakersArg(2, 100)),
  ...RangeArgs,
  min_posts: Type.Integer({ minimum: 1, maximum: 1000, default: 2, description: 'without actors: authors with at least this many posts' })
}

interface ActorInput { actors?: Speaker[], from?: string, to?: string, source?: string, min_posts: number }

/** The actors given, or the post stream's authors in the range; and their stance table. */
async function actorTable (kit: ModuleKit, args: ActorInput): Promise<{ table: StanceTable, engine: string, from: 'actors' | 'posts' }> {
  const range = postRange(args, 'actors', args.actors !== undefined)
  const speakers = args.actors !== undefined
    ? checkSpeakers('actors', args.actors)
    : postActors(await kit.posts.list(range.from, range.to, { source: range.source }), args.min_posts)
  const engine = await kit.language()
  return { table: stanceTable(engine, speakers), engine: engine.name, from: args.actors !== undefined ? 'actors' : 'posts' }
}

export function factionFunctions (kit: ModuleKit): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'map-factions',
      args: Type.Object({ ...ActorArgs, min_similarity: Type.Number({ minimum: 0, maximum: 1, default: MIN_SIMILARITY }) }, { additionalProperties: false }),
      handler: async args => {
        const { table, engine, from } = await actorTable(kit, args)
        const { factions, edges, unaligned } = mapFactions(table, args.min_similarity)
        const factionOf = new Map(factions.flatMap(f => f.members.map(m => [m, f.faction_id] as const)))
        return {
          actors_from: from,
          topics: table.topics.map(t => ({ topic: t.topic, actors: t.speakers, mentions: t.mentions })),
          factions,
          unaligned,
          nodes: table.speakers.map(s => ({ name: s.name, faction_id: factionOf.get(s.name) ?? null, clauses: s.clauses.length, topics: table.positions.get(s.name)?.size ?? 0 })),
          edges,
          engine
        }
      }
    }),
    moduleFunction({
      name: 'consensus-finder',
      args: Type.Object({ ...ActorArgs, min_share: Type.Number({ minimum: 0.5, maximum: 1, default: CONSENSUS_SHARE }) }, { additionalProperties: false }),
      handler: async args => {
        const { table, engine, from } = await actorTable(kit, args)
        return { actors_from: from, actors: table.speakers.length, topics: table.topics.length, ...findConsensus(table, args.min_share), engine }
      }
    })
  ]
}
