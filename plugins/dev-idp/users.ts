// The accounts of the development identity provider: one per realm role the product using it names
// (the campaign's roles, the telemetry fleet's), each with a random password, drawn once and kept in
// a 0600 file when the server runs it, checked in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'

export interface DevUser {
  /** Subject id (also the login name). */
  sub: string
  username: string
  password: string
  email: string
  name: string
  /** The realm role in the access token's realm_access.roles. */
  role: string
}

/**
 * One user per role: login `<role>` (without a `fleet-` prefix), e-mail `<login>@<domain>`, a fresh
 * random password.
 */
export function seedUsers (roles: readonly string[], domain: string): DevUser[] {
  return roles.map(role => {
    const login = role.replace(/^fleet-/, '')
    return {
      sub: `dev-${role}`,
      username: login,
      password: randomBytes(12).toString('base64url'),
      email: `${login}@${domain}`,
      name: `${login[0].toUpperCase()}${login.slice(1)} User`,
      role
    }
  })
}

const USERS_FILE_HEADER = '# Sign-in names and passwords of the development identity provider: <login> <password>\n'

/**
 * One user per role, as `seedUsers` makes them, with the passwords kept in `file` (0600, one line
 * `<login> <password>` each): those found there are used again, missing ones are drawn and the file
 * is written anew. `drawn` says whether any password is new (to be told to the person at the terminal).
 */
export function keptUsers (file: string, roles: readonly string[], domain: string): { users: DevUser[], drawn: boolean } {
  const kept = new Map<string, string>()
  for (const line of existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []) {
    const match = /^([^#\s]\S*) (\S+)$/.exec(line)
    if (match !== null) kept.set(match[1], match[2])
  }
  const users = seedUsers(roles, domain).map(user => ({ ...user, password: kept.get(user.username) ?? user.password }))
  const drawn = users.some(user => kept.get(user.username) !== user.password)
  if (drawn) {
    writeFileSync(file, USERS_FILE_HEADER + users.map(user => `${user.username} ${user.password}\n`).join(''), { mode: 0o600 })
    chmodSync(file, 0o600)
  }
  return { users, drawn }
}

/** The user with these credentials, or undefined; the password comparison takes constant time. */
export function checkCredentials (users: readonly DevUser[], username: string, password: string): DevUser | undefined {
  const user = users.find(u => u.username === username)
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest()
  const matches = timingSafeEqual(digest(password), digest(user?.password ?? randomBytes(16).toString('hex')))
  return user !== undefined && matches ? user : undefined
}
