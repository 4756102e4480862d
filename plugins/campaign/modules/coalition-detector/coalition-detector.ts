// Coalition detector: detect-tensions finds where member groups of a coalition disagree. On the topics
// the groups share (stance.ts), a pair of groups is in tension on a topic when their stances have
// opposite signs or lie at least a threshold apart; tensions are ranked by |difference| × topic weight.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, mean, round, type ModuleKit, evidence, stanceSign, stanceTable, type StanceTable, checkSpeakers, SpeakersArg } from '../../module-kit.js'

/** Two stances this far apart are in tension even with the same sign. */
export const MIN_DIFFERENCE = 0.6
/** Most tensions listed. */
export const MAX_TENSIONS = 50

export interface Tension {
  group_a: string
  group_b: string
  topic: string
  stance_a: number
  stance_b: number
  difference: number
  /** Share of all groups that mention the topic. */
  weight: number
  score: number
  evidence_a: string[]
  evidence_b: string[]
}

export interface PairSummary {
  group_a: string
  group_b: string
  shared_topics: number
  tensions: number
  agreements: number
  tension_score: number
  /** Mean over shared topics of 1 − |stance_a − stance_b| / 2: 1 when they stand alike. */
  alignment: number
  top_topic: string | null
}

/** Tensions and the summary of every pair of groups, in the documented order. */
export function detectTensions (table: StanceTable, minDifference = MIN_DIFFERENCE): { tensions: Tension[], pairs: PairSummary[] } {
  const weights = new Map(table.topics.map(t => [t.topic, round(t.speakers / table.speakers.length)]))
  const tensions: Tension[] = []
  const pairs: PairSummary[] = []
  const names = table.speakers.map(s => s.name)
  names.forEach((a, i) => {
    for (const b of names.slice(i + 1)) {
      const mine = table.positions.get(a) ?? new Map()
      const theirs = table.positions.get(b) ?? new Map()
      const found: Tension[] = []
      const alignments: number[] = []
      let agreements = 0
      for (const topic of table.topics) {
        const pa = mine.get(topic.topic)
        const pb = theirs.get(topic.topic)
        if (pa === undefined || pb === undefined) continue
        const difference = round(Math.abs(pa.stance - pb.stance))
        alignments.push(1 - difference / 2)
        const [sa, sb] = [stanceSign(pa.stance), stanceSign(pb.stance)]
        if (pa.opinionated > 0 && pb.opinionated > 0 && (sa * sb === -1 || difference >= minDifference)) {
          const weight = weights.get(topic.topic) ?? 0
          found.push({ group_a: a, group_b: b, topic: topic.topic, stance_a: pa.stance, stance_b: pb.stance, difference, weight, score: round(difference * weight), evidence_a: evidence(pa), evidence_b: evidence(pb) })
        } else if (sa !== 0 && sa === sb) agreements++
      }
      tensions.push(...found)
      pairs.push({
        group_a: a,
        group_b: b,
        shared_topics: alignments.length,
        tensions: found.length,
        agreements,
        tension_score: round(found.reduce((sum, t) => sum + t.score, 0)),
        alignment: round(mean(alignments)),
        top_topic: [...found].sort((x, y) => y.score - x.score)[0]?.topic ?? null
      })
    }
  })
  const topicRank = new Map(table.topics.map((t, i) => [t.topic, i]))
  tensions.sort((x, y) => y.score - x.score || (topicRank.get(x.topic) ?? 0) - (topicRank.get(y.topic) ?? 0) || names.indexOf(x.group_a) - names.indexOf(y.group_a) || names.indexOf(x.group_b) - names.indexOf(y.group_b))
  pairs.sort((x, y) => y.tension_score - x.tension_score || x.alignment - y.alignment || names.indexOf(x.group_a) - names.indexOf(y.group_a) || names.indexOf(x.group_b) - names.indexOf(y.group_b))
  return { tensions: tensions.slice(0, MAX_TENSIONS), pairs }
}

const DetectArgs = Type.Object({
  groups: SpeakersArg(2, 20),
  min_difference: Type.Number({ minimum: 0.1, maximum: 2, default: MIN_DIFFERENCE, description: 'stances this far apart are in tension even with the same sign' })
}, { additionalProperties: false })

export function coalitionFunctions (kit: ModuleKit): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'detect-tensions',
      args: DetectArgs,
      handler: async ({ groups, min_difference: minDifference }) => {
        const speakers = checkSpeakers('groups', groups)
        const engine = await kit.language()
        const table = stanceTable(engine, speakers)
        const weights = table.topics.map(t => ({ topic: t.topic, groups: t.speakers, mentions: t.mentions, weight: round(t.speakers / speakers.length) }))
        return {
          groups: table.speakers.map(s => ({ name: s.name, clauses: s.clauses.length, topics: table.positions.get(s.name)?.size ?? 0 })),
          topics: weights,
          ...detectTensions(table, minDifference),
          engine: engine.name
        }
      }
    })
  ]
}
