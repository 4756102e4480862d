// The accounts of the development identity provider: one per campaign role, each with a random
// password drawn at start, checked in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { ROLES, type Role } from '../roles.js'

export interface DevUser {
  /** Subject id (also the login name). */
  sub: string
  username: string
  password: string
  email: string
  name: string
  role: Role
}

/** One user per role: login `<role>`, e-mail `<role>@campaign.test`, a fresh random password. */
export function seedUsers (): DevUser[] {
  return ROLES.map(role => ({
    sub: `dev-${role}`,
    username: role,
    password: randomBytes(12).toString('base64url'),
    email: `${role}@campaign.test`,
    name: `${role[0].toUpperCase()}${role.slice(1)} User`,
    role
  }))
}

/** The user with these credentials, or undefined; the password comparison takes constant time. */
export function checkCredentials (users: readonly DevUser[], username: string, password: string): DevUser | undefined {
  const user = users.find(u => u.username === username)
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest()
  const matches = timingSafeEqual(digest(password), digest(user?.password ?? randomBytes(16).toString('hex')))
  return user !== undefined && matches ? user : undefined
}
