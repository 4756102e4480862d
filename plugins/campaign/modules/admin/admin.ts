// The admin panel's functions: the health of the campaign application (with the feedback each module
// received), the users who signed in, the API tokens of external clients, and the audit log.
import { Forbidden, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { TOKEN_SUBJECT, type ApiTokens, type AuditLog, TimeRangeArgs, timeRange, moduleFunction, type ModuleFunction, PeopleView, ROLES, type Role, type SessionRecord, type Table } from '../../module-kit.js'
import type { ModuleFeedback } from '../shared/index.js'
import { manifest } from './manifest.js'

/** What each role sees of a user (the manifest's view). */
export const USER_VIEW = new PeopleView<UserRecord>('user', manifest.views.user)

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
  tokens: ApiTokens
  audit: AuditLog
}

const NoArgs = Type.Object({}, { additionalProperties: false })

/** Tokens are managed by admins signed in themselves: a token never makes or revokes tokens. */
function signedIn (session: SessionRecord | undefined): SessionRecord {
  if (session === undefined || session.sub.startsWith(TOKEN_SUBJECT)) throw new Forbidden('API tokens are managed by an admin signed in, not with an API token')
  return session
}

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
    }),
    moduleFunction({
      name: 'admin-create-api-token',
      args: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 64, description: 'What the token is for (the client that holds it)' }),
        role: Type.Union(ROLES.map(role => Type.Literal(role)), { description: 'The role its requests act as' })
      }, { additionalProperties: false }),
      handler: async ({ name, role }, { session }) => {
        const by = signedIn(session)
        return await sources.tokens.create(name, role, by.email === '' ? by.sub : by.email)
      }
    }),
    moduleFunction({
      name: 'admin-list-api-tokens',
      args: NoArgs,
      handler: async (_args, { session }) => {
        signedIn(session)
        return { tokens: await sources.tokens.list() }
      }
    }),
    moduleFunction({
      name: 'admin-revoke-api-token',
      args: Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{16}$', description: 'The token\'s id' }) }, { additionalProperties: false }),
      handler: async ({ id }, { session }) => {
        signedIn(session)
        if (!await sources.tokens.revoke(id)) throw new NotFound(`no API token ${id}`)
        return { revoked: id }
      }
    }),
    moduleFunction({
      name: 'audit-log',
      args: Type.Object({
        table: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only writes to this table (people, donations, volunteers…)' })),
        by: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'only writes by this user (their e-mail address), API token or system' })),
        ...TimeRangeArgs,
        limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
        cursor: Type.Optional(Type.String({ maxLength: 64, description: 'next_cursor of the previous page' }))
      }, { additionalProperties: false }),
      handler: async ({ limit, cursor, ...query }) => {
        const { from, to } = timeRange(query)
        return await sources.audit.page({ table: query.table, by: query.by, from: from?.toISOString(), to: to?.toISOString() }, limit, cursor)
      }
    })
  ]
}

/** Record a login in the users database. */
export async function recordLogin (users: UserDb, { sub, email, name, role }: { sub: string, email: string, name: string, role: Role }): Promise<void> {
  const previous = await users.get(sub)
  await users.put(sub, { sub, email, name, role, last_login_at: new Date().toISOString(), logins: (previous?.logins ?? 0) + 1 })
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** What the admin panel reports: users, uptime, live counts, the issuer, the feedback per module. */
    admin: AdminSources
  }
}
