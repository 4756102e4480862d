// Call intelligence: analyze-transcript analyses a canvassing call (call-analysis.ts) and stores it;
// call-trends aggregates the stored calls per day or week (outcomes, mean sentiment, top issues) and
// lists the recent ones, newest first, each shown through CALL_VIEW (the contact's name to staff only).
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, PeopleView, mean, round, bucketStart, checkText, instant, type ModuleKit, PageArgs, RecordStore, TextArg, timeKey, timeRange, TimeRangeArgs } from '../../module-kit.js'
import { manifest } from './manifest.js'
import { analyzeCall, OUTCOMES, type Outcome } from './call-analysis.js'

/** What each role sees of a call (the manifest's view). */
export const CALL_VIEW = new PeopleView<CallRecord>('call', manifest.views.call)

export interface CallRecord {
  call_id: string
  called_at: string
  caller: string
  contact: string
  recorded_by: string
  outcome: Outcome
  /** Mean polarity of the contact's turns. */
  sentiment: number
  issues: string[]
  follow_up: boolean
  turns: number
}

const AnalyzeArgs = Type.Object({
  transcript: TextArg('lines "Speaker: words"; a text without labels is one speaker'),
  caller: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  contact: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  called_at: Type.Optional(Type.String({ description: 'ISO 8601; now when absent' }))
}, { additionalProperties: false })

const TrendArgs = Type.Object({
  ...TimeRangeArgs,
  bucket: Type.Union([Type.Literal('day'), Type.Literal('week')], { default: 'day' }),
  ...PageArgs
}, { additionalProperties: false })

/** The bucket a call falls in: its UTC day, or the Monday starting its ISO week, as YYYY-MM-DD. */
export function callBucket (iso: string, bucket: 'day' | 'week'): string {
  const start = new Date(bucketStart(iso, 'day'))
  if (bucket === 'week') start.setUTCDate(start.getUTCDate() - (start.getUTCDay() + 6) % 7)
  return start.toISOString().slice(0, 10)
}

export interface CallAggregate {
  calls: number
  outcomes: Record<Outcome, number>
  mean_sentiment: number
  follow_ups: number
  top_issues: Array<{ issue: string, calls: number }>
}

/** Counts by outcome, mean contact sentiment, follow-ups, and the issues raised in most calls (at most 3, ties by name). */
export function aggregateCalls (calls: readonly CallRecord[]): CallAggregate {
  const outcomes = Object.fromEntries(OUTCOMES.map(o => [o, 0])) as Record<Outcome, number>
  const issues = new Map<string, number>()
  for (const call of calls) {
    outcomes[call.outcome]++
    for (const issue of call.issues) issues.set(issue, (issues.get(issue) ?? 0) + 1)
  }
  return {
    calls: calls.length,
    outcomes,
    mean_sentiment: round(mean(calls.map(c => c.sentiment))),
    follow_ups: calls.filter(c => c.follow_up).length,
    top_issues: [...issues].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([issue, n]) => ({ issue, calls: n }))
  }
}

export function callIntelligenceFunctions (kit: ModuleKit): ModuleFunction[] {
  const calls = new RecordStore<CallRecord>(kit.store, 'calls', kit.maxRecords)
  return [
    moduleFunction({
      name: 'analyze-transcript',
      args: AnalyzeArgs,
      handler: async (args, { session }) => {
        checkText('transcript', args.transcript)
        const calledAt = args.called_at === undefined ? new Date() : instant('called_at', args.called_at)
        const engine = await kit.language()
        const analysis = analyzeCall(engine, args.transcript, { caller: args.caller, contact: args.contact })
        const callId = timeKey(calledAt)
        const record: CallRecord = {
          call_id: callId,
          called_at: calledAt.toISOString(),
          caller: analysis.caller,
          contact: analysis.contact,
          recorded_by: session?.email ?? '',
          outcome: analysis.outcome,
          sentiment: analysis.sentiment,
          issues: analysis.issues.map(i => i.issue),
          follow_up: analysis.follow_up,
          turns: analysis.turns.length
        }
        await calls.put(callId, record)
        return { call_id: callId, called_at: record.called_at, ...analysis, engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'call-trends',
      args: TrendArgs,
      handler: async (args, { session }) => {
        CALL_VIEW.refuseUnseen(session?.role, 'filter call-trends', args, { from: ['called_at'], to: ['called_at'] })
        const { from, to } = timeRange(args)
        const engine = await kit.language()
        const inRange = await calls.list(from, to)
        const byBucket = new Map<string, CallRecord[]>()
        for (const call of inRange) {
          const key = callBucket(call.called_at, args.bucket)
          const group = byBucket.get(key)
          if (group === undefined) byBucket.set(key, [call])
          else group.push(call)
        }
        const within = (call: CallRecord): boolean => (from === undefined || call.called_at >= from.toISOString()) && (to === undefined || call.called_at <= to.toISOString())
        const page = await calls.page(args.limit, args.cursor, within)
        return {
          bucket: args.bucket,
          totals: aggregateCalls(inRange),
          buckets: [...byBucket].sort((a, b) => a[0].localeCompare(b[0])).map(([start, group]) => ({ bucket_start: start, ...aggregateCalls(group) })),
          calls: page.items.map(({ id: _id, ...call }) => CALL_VIEW.show(call, session?.role)),
          next_cursor: page.next_cursor,
          engine: engine.name
        }
      }
    })
  ]
}
