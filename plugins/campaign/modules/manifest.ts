// What a module declares of itself, read by the server (registration, page routes) and by the UI
// (routes, navigation, home page): nothing here or in a module's manifest.ts may import node code.
import type { Role } from '../roles.js'

/** The navigation's groups, in the order a campaign team works in, from organising to compliance. */
export const MODULE_GROUPS = ['Organise', 'Listen', 'Message', 'Candidate', 'Coalition', 'Policy and compliance', 'Administration'] as const

export type ModuleGroup = typeof MODULE_GROUPS[number]

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
}
