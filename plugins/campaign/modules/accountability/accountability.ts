// Accountability: extract-commitments stores the commitments a text makes (commitments.ts), add-evidence
// records evidence on one and moves its status, accountability-report lists them with evidence counts,
// overdue flags and counts by status.
import { randomBytes } from 'node:crypto'
import { NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, checkText, instant, PageArgs, RecordStore, TextArg, timeKey, type ModuleKit } from '../../module-kit.js'
import { extractCommitments, inferVerdict, type CommitmentStatus, type ExtractedCommitment, type Verdict } from './commitments.js'

export interface Commitment extends ExtractedCommitment {
  commitment_id: string
  source: string
  /** YYYY-MM-DD: the day the text was said, the reference of relative due dates. */
  said_on: string
  status: CommitmentStatus
  evidence_count: number
  recorded_by: string
  recorded_at: string
  updated_at: string
}

export interface Evidence {
  evidence_id: string
  commitment_id: string
  text: string
  url: string
  verdict: Verdict
  /** Whether the verdict was inferred from the text (no verdict given). */
  inferred: boolean
  cues: string[]
  added_by: string
  added_at: string
}

const STATUSES: readonly CommitmentStatus[] = ['open', 'in_progress', 'kept', 'broken']
const VerdictArg = Type.Union([Type.Literal('kept'), Type.Literal('broken'), Type.Literal('in_progress')])

const ExtractArgs = Type.Object({
  text: TextArg('a speech, statement or platform'),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'who "I" and "we" are' })),
  source: Type.String({ maxLength: 500, default: '' }),
  said_on: Type.Optional(Type.String({ description: 'YYYY-MM-DD; today when absent' }))
}, { additionalProperties: false })

const EvidenceArgs = Type.Object({
  commitment_id: Type.String({ minLength: 1, maxLength: 64 }),
  text: TextArg('what happened'),
  url: Type.Optional(Type.String({ pattern: '^https?://\\S+$', maxLength: 2000 })),
  verdict: Type.Optional(VerdictArg)
}, { additionalProperties: false })

const ReportArgs = Type.Object({
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Type.Union(STATUSES.map(s => Type.Literal(s)))),
  ...PageArgs
}, { additionalProperties: false })

/** Due and not kept, as of `today` (YYYY-MM-DD). */
export const isOverdue = (c: Commitment, today: string): boolean => c.due_on !== null && c.due_on < today && c.status !== 'kept'

/** The stored commitments (the `commitments` database), which other modules read too. */
export const commitmentStore = (kit: Pick<ModuleKit, 'store' | 'maxRecords'>): RecordStore<Commitment> => new RecordStore<Commitment>(kit.store, 'commitments', kit.maxRecords)

export function accountabilityFunctions (kit: ModuleKit): ModuleFunction[] {
  const commitments = commitmentStore(kit)
  const evidence = new RecordStore<Evidence>(kit.store, 'commitment-evidence', kit.maxRecords)
  return [
    moduleFunction({
      name: 'extract-commitments',
      args: ExtractArgs,
      handler: async (args, { session }) => {
        checkText('text', args.text)
        const saidOn = args.said_on === undefined ? new Date() : instant('said_on', args.said_on)
        const engine = await kit.language()
        const now = new Date()
        const batch = randomBytes(3).toString('hex')
        const found: Commitment[] = extractCommitments(engine, args.text, { actor: args.actor, saidOn }).map((c, i) => ({
          ...c,
          commitment_id: timeKey(now, `${batch}${String(i).padStart(3, '0')}`),
          source: args.source,
          said_on: saidOn.toISOString().slice(0, 10),
          status: 'open',
          evidence_count: 0,
          recorded_by: session?.email ?? '',
          recorded_at: now.toISOString(),
          updated_at: now.toISOString()
        }))
        await commitments.putAll(found.map(c => [c.commitment_id, c] as const))
        return { commitments: found, sentences: engine.sentences(args.text).length, engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'add-evidence',
      args: EvidenceArgs,
      handler: async (args, { session }) => {
        checkText('text', args.text)
        const engine = await kit.language()
        const inferred = inferVerdict(args.text)
        const verdict = args.verdict ?? inferred.verdict
        const now = new Date()
        const commitment = await kit.store.transaction(`commitment:${args.commitment_id}`, async tx => {
          const table = tx.table<Commitment>('commitments')
          const current = await table.get(args.commitment_id)
          if (current === undefined) throw new NotFound(`no commitment "${args.commitment_id}"`)
          const updated: Commitment = { ...current, status: verdict, evidence_count: current.evidence_count + 1, updated_at: now.toISOString() }
          await table.put(args.commitment_id, updated)
          return updated
        })
        const evidenceId = timeKey(now)
        const item: Evidence = {
          evidence_id: evidenceId,
          commitment_id: args.commitment_id,
          text: args.text,
          url: args.url ?? '',
          verdict,
          inferred: args.verdict === undefined,
          cues: args.verdict === undefined ? inferred.cues : [],
          added_by: session?.email ?? '',
          added_at: now.toISOString()
        }
        await evidence.put(evidenceId, item)
        return { evidence: item, commitment, engine: engine.name }
      }
    }),
    moduleFunction({
      name: 'accountability-report',
      args: ReportArgs,
      handler: async args => {
        const engine = await kit.language()
        const today = new Date().toISOString().slice(0, 10)
        const needle = args.actor?.toLowerCase()
        const byActor = (c: Commitment): boolean => needle === undefined || c.actor.toLowerCase().includes(needle)
        const counts = Object.fromEntries(STATUSES.map(s => [s, 0])) as Record<CommitmentStatus, number>
        let total = 0
        let overdue = 0
        for await (const c of commitments.between()) {
          if (!byActor(c)) continue
          total++
          counts[c.status]++
          if (isOverdue(c, today)) overdue++
        }
        const page = await commitments.page(args.limit, args.cursor, c => byActor(c) && (args.status === undefined || c.status === args.status))
        return {
          total,
          counts,
          overdue,
          commitments: page.items.map(({ id: _id, ...c }) => ({ ...c, overdue: isOverdue(c, today) })),
          next_cursor: page.next_cursor,
          engine: engine.name
        }
      }
    })
  ]
}
