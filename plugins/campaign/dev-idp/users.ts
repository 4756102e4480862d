// The accounts of the development identity provider: one per role (the campaign's by default, or
// any realm roles, such as the telemetry fleet's), each with a random password drawn at start,
// checked in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { ROLES } from '../roles.js'

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
export function seedUsers (roles: readonly string[] = ROLES, domain = 'campaign.test'): DevUser[] {
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

/** The user with these credentials, or undefined; the password comparison takes constant time. */
export function checkCredentials (users: readonly DevUser[], username: string, password: string): DevUser | undefined {
  const user = users.find(u => u.username === username)
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest()
  const matches = timingSafeEqual(digest(password), digest(user?.password ?? randomBytes(16).toString('hex')))
  return user !== undefined && matches ? user : undefined
}
