// Who sees what of a person. Each record type that holds people has one view, declared in its
// module's manifest (modules/manifest.ts, RecordView): for every field, the roles that see it (admin
// sees every field); the functions returning such records show them through it, and the functions
// listing or searching them filter, sort and search through it too: a role may query only the fields
// it sees. Attribution fields (`recorded_by`, `created_by`…: the e-mail of the
// user who did something) are one rule for every record, applied to every result: only admin and
// staff see them.
import { Forbidden } from '../../kernel/index.js'
import type { Role } from './roles.js'
import type { Audience } from './modules/manifest.js'

/** The fields naming the user who did something, wherever they appear in a result. */
export const ATTRIBUTION_FIELDS = ['recorded_by', 'created_by', 'checked_by', 'added_by', 'analyzed_by', 'changed_by'] as const
type AttributionField = typeof ATTRIBUTION_FIELDS[number]
/** A field of a record type that its view names. */
export type ViewField<T> = Exclude<keyof T, AttributionField>
/** The conditions a query (a filter, a sort order, a search) may give, each with the fields of the record it reads. */
export type Conditions<T> = Readonly<Record<string, ReadonlyArray<ViewField<T>>>>
/** Who sees attribution fields besides admin. */
export const ATTRIBUTION_AUDIENCE: Audience = ['staff']

const sees = (role: Role | undefined, audience: Audience): boolean => role === 'admin' || (role !== undefined && (audience as readonly Role[]).includes(role))

/** A record type's view, made from its module's manifest: every field but the attribution ones names its audience. */
export class PeopleView<T extends object> {
  readonly kind: string
  readonly fields: { readonly [K in ViewField<T>]-?: Audience }

  constructor (kind: string, fields: { readonly [K in ViewField<T>]-?: Audience }) {
    this.kind = kind
    this.fields = fields
  }

  /** Whether `role` sees `field`; nobody without a role does. */
  sees (field: ViewField<T>, role: Role | undefined): boolean {
    return sees(role, this.fields[field])
  }

  /** Of `fields`, those `role` sees, in the order given: where a free-text search by `role` looks. */
  visibleOf<F extends ViewField<T>> (fields: readonly F[], role: Role | undefined): F[] {
    return fields.filter(field => this.sees(field, role))
  }

  /** The first condition `query` gives (of `reads`) that reads a field `role` does not see, with that field; undefined when the role sees them all. */
  unseen (role: Role | undefined, query: object, reads: Conditions<T>): [string, ViewField<T>] | undefined {
    for (const [condition, fields] of Object.entries(reads)) {
      if ((query as Record<string, unknown>)[condition] === undefined) continue
      const hidden = fields.find(field => !this.sees(field, role))
      if (hidden !== undefined) return [condition, hidden]
    }
    return undefined
  }

  /**
   * Refuse (403) a query by `role` giving a condition that reads a field the role does not see: a
   * role filters, sorts and searches only on what it sees, so no count, order or match tells it the
   * rest. `use` says what the query is ("filter list-people").
   */
  refuseUnseen (role: Role | undefined, use: string, query: object, reads: Conditions<T>): void {
    const hidden = this.unseen(role, query, reads)
    if (hidden === undefined) return
    const who = role ?? 'a caller without a role'
    throw new Forbidden(`${who} may not ${use} by ${hidden[0]}: it reads the ${this.kind}'s ${String(hidden[1])}, which ${who} does not see`)
  }

  /** The record with only the fields `role` sees (attribution fields pass, for `hideAttribution`). */
  show (record: T, role: Role | undefined): Partial<T> {
    const audiences = this.fields as Record<string, Audience | undefined>
    return Object.fromEntries(Object.entries(record).filter(([field]) => {
      const audience = audiences[field]
      return audience === undefined ? (ATTRIBUTION_FIELDS as readonly string[]).includes(field) : sees(role, audience)
    })) as Partial<T>
  }
}

const isPlainObject = (item: unknown): item is Record<string, unknown> => item !== null && typeof item === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(item))

/** `value` without attribution fields at any depth, unless `role` sees them (arrays and plain objects are copied, other values kept). */
export function hideAttribution (value: unknown, role: Role | undefined): unknown {
  if (sees(role, ATTRIBUTION_AUDIENCE)) return value
  const strip = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(strip)
    if (!isPlainObject(item)) return item
    return Object.fromEntries(Object.entries(item).filter(([key]) => !(ATTRIBUTION_FIELDS as readonly string[]).includes(key)).map(([key, v]) => [key, strip(v)]))
  }
  return strip(value)
}
