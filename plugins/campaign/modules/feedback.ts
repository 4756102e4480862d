// record-feedback, shared by every module: a user's thumbs up or down on one resource of one module,
// kept per user (a later call replaces the earlier one; is_active false withdraws it).
import type { Database } from 'lmdb'
import { Type } from '../../../kernel/schema.js'
import { SHARED_MODULE, serverFunction, type ServerFunction } from '../functions.js'

export interface FeedbackRecord {
  module_id: string
  resource_id: string
  sub: string
  is_positive: boolean
  is_active: boolean
  updated_at: string
}

export type FeedbackDb = Database<FeedbackRecord, string[]>

const FeedbackArgs = Type.Object({
  module_id: Type.String({ minLength: 1, maxLength: 64 }),
  resource_id: Type.String({ minLength: 1, maxLength: 256 }),
  is_positive: Type.Boolean(),
  is_active: Type.Boolean()
}, { additionalProperties: false })

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
