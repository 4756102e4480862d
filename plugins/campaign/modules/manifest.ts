// What a module declares of itself, read by the server (registration, page routes) and by the UI
// (routes, navigation, home page): nothing here or in a module's manifest.ts may import node code.
// Part of the published module kit (with module-kit.ts and ui/src/module-kit.ts): the one file of the
// core a module's manifest imports.
import type { Role } from '../roles.js'

/** The navigation's groups, in the order a campaign team works in, from organising to compliance. */
export const MODULE_GROUPS = ['Organise', 'Listen', 'Message', 'Candidate', 'Coalition', 'Policy and compliance', 'Administration'] as const

export type ModuleGroup = typeof MODULE_GROUPS[number]

/** The roles besides admin that see a field. */
export type Audience = ReadonlyArray<Exclude<Role, 'admin'>>

/** Every role. */
export const EVERYONE: Audience = ['staff', 'volunteer', 'readonly']
/** The roles that read the campaign's records: staff and readonly. */
export const READERS: Audience = ['staff', 'readonly']
export const STAFF: Audience = ['staff']
/** Admin alone. */
export const ADMIN: Audience = []

/**
 * What each role sees of one type of record holding people: for every field of the record (the
 * attribution fields aside, one rule for every record: people.ts), the roles besides admin that see
 * it. The module's functions show, filter, sort and search its records through a `PeopleView` made
 * from it (people.ts), which checks at compile time that every field of the record type has one.
 */
export type RecordView = Readonly<Record<string, Audience>>

export interface ModuleManifest {
  /** The module's id: its page is `/{id}`, its functions' `module`, its feedback's `module_id`. */
  id: string
  /** The page's title in the navigation and on the home page. */
  title: string
  /** One sentence on the home page. */
  blurb: string
  group: ModuleGroup
  /** Its server functions by name, each with the roles that may call it besides admin, who may call every function. */
  functions: Readonly<Record<string, readonly Role[]>>
  /** Its record views by the kind of record (`person`, `send log`…), when its records hold people. */
  views?: Readonly<Record<string, RecordView>>
}
