// The admin panel's functions: the health of the campaign application (with the feedback each module
// received) and the users who signed in.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction } from '../../functions.js'
import { USER_VIEW } from '../../people.js'
import type { Role } from '../../roles.js'
import type { ModuleFeedback } from '../shared/feedback.js'
import type { Table } from '../../store/contract.js'

/** Kept for every user who signed in, by subject id. */
export interface UserRecord {
  sub: string
  email: string
  name: string
  role: Role
  last_login_at: string
  logins: number
}

export type UserDb = Table<UserRecord>

export interface AdminSources {
  users: UserDb
  startedAt: number
  /** Live numbers: sessions, pending logins, stored records by kind. */
  counts(): Promise<Record<string, number>>
  /** The issuer in use, once known. */
  issuer(): string
  /** Ratings given with record-feedback, per module. */
  feedback(): Promise<ModuleFeedback[]>
}

const NoArgs = Type.Object({}, { additionalProperties: false })

export function adminFunctions (sources: AdminSources): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'admin-health',
      args: NoArgs,
      handler: async () => ({
        status: 'ok',
        uptime_seconds: Math.round((Date.now() - sources.startedAt) / 1000),
        identity_provider: sources.issuer(),
        counts: await sources.counts(),
        feedback: await sources.feedback()
      })
    }),
    moduleFunction({
      name: 'admin-list-users',
      args: NoArgs,
      handler: async (_args, { session }) => ({
        users: (await sources.users.list()).map(({ value }) => value).sort((a, b) => a.email.localeCompare(b.email)).map(u => USER_VIEW.show(u, session?.role))
      })
    })
  ]
}

/** Record a login in the users database. */
export async function recordLogin (users: UserDb, { sub, email, name, role }: { sub: string, email: string, name: string, role: Role }): Promise<void> {
  const previous = await users.get(sub)
  await users.put(sub, { sub, email, name, role, last_login_at: new Date().toISOString(), logins: (previous?.logins ?? 0) + 1 })
}
