// record-feedback, shared by every module: a user's thumbs up or down on one resource of one module,
// kept per user (a later call replaces the earlier one; is_active false withdraws it), and the
// counts per module the admin panel shows.
import { Type } from '../../../../kernel/schema.js'
import { SHARED_MODULE, serverFunction, type ServerFunction, type Table } from '../../module-kit.js'

export interface FeedbackRecord {
  module_id: string
  resource_id: string
  sub: string
  is_positive: boolean
  is_active: boolean
  updated_at: string
}

/** Ratings by [module_id, resource_id, sub]. */
export type FeedbackDb = Table<FeedbackRecord, string[]>

const FeedbackArgs = Type.Object({
  module_id: Type.String({ minLength: 1, maxLength: 64 }),
  resource_id: Type.String({ minLength: 1, maxLength: 256 }),
  is_positive: Type.Boolean(),
  is_active: Type.Boolean()
}, { additionalProperties: false })

export interface ModuleFeedback {
  module_id: string
  positive: number
  negative: number
  /** Distinct resources rated. */
  resources: number
  last_at: string
}

/** Active feedback counted per module (withdrawn ratings left out), by module id. */
export async function feedbackByModule (db: FeedbackDb): Promise<ModuleFeedback[]> {
  const byModule = new Map<string, ModuleFeedback & { seen: Set<string> }>()
  for await (const { value } of db.range()) {
    if (!value.is_active) continue
    let entry = byModule.get(value.module_id)
    if (entry === undefined) {
      entry = { module_id: value.module_id, positive: 0, negative: 0, resources: 0, last_at: '', seen: new Set() }
      byModule.set(value.module_id, entry)
    }
    if (value.is_positive) entry.positive++
    else entry.negative++
    entry.seen.add(value.resource_id)
    if (value.updated_at > entry.last_at) entry.last_at = value.updated_at
  }
  return [...byModule.values()].map(({ seen, ...entry }) => ({ ...entry, resources: seen.size })).sort((a, b) => a.module_id.localeCompare(b.module_id))
}

export function feedbackFunctions (db: FeedbackDb): ServerFunction[] {
  return [serverFunction({
    name: 'record-feedback',
    module: SHARED_MODULE,
    access: ['staff', 'volunteer'],
    args: FeedbackArgs,
    handler: async (args, { session }) => {
      const record: FeedbackRecord = { ...args, sub: session?.sub ?? '', updated_at: new Date().toISOString() }
      await db.put([args.module_id, args.resource_id, record.sub], record)
      return { recorded: true, updated_at: record.updated_at }
    }
  })]
}
