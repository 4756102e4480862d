// The development identity provider run inside the server when a product's setting asks for it (the
// setting is refused in production): its users' passwords kept in a 0600 file of the state directory
// and told to the person at the terminal (the start-up summary), never logged.
import { join } from 'node:path'
import type { PluginContext } from '../../kernel/index.js'
import { startDevIdp, type DevIdp, type DevIdpOptions } from './provider.js'
import { keptUsers } from './users.js'

export interface EmbeddedIdp {
  idp: DevIdp
  /** The 0600 file holding its users' passwords. */
  file: string
  /** Whether the passwords were drawn at this start (else they were read from the file). */
  drawn: boolean
  /** How to sign in through it, for the start-up summary: the logins, and the passwords when they are new. */
  signIn: string
}

export interface EmbeddedIdpOptions extends Omit<DevIdpOptions, 'users'> {
  /** The passwords file's name in the state directory. */
  file: string
  /** One user per role. */
  roles: readonly string[]
  /** The users' e-mail domain. */
  domain: string
}

export async function startEmbeddedIdp (ctx: Pick<PluginContext, 'log' | 'stateDir'>, options: EmbeddedIdpOptions): Promise<EmbeddedIdp> {
  const file = join(ctx.stateDir, options.file)
  const { users, drawn } = keptUsers(file, options.roles, options.domain)
  const idp = await startDevIdp({ ...options, users })
  ctx.log.warn({ idp_url: idp.url, passwords_file: file }, 'the development identity provider runs on loopback; never use it in production')
  return { idp, file, drawn, signIn: signInNote(idp, file, drawn) }
}

function signInNote (idp: DevIdp, file: string, drawn: boolean): string {
  const logins = idp.users.map(user => user.username)
  if (!drawn) return `sign in through the development identity provider as ${logins.join(', ')}; passwords in ${file}`
  return `sign in through the development identity provider; new passwords (kept in ${file}):\n` +
    idp.users.map(user => `${user.username} ${user.password}`).join('   ')
}
