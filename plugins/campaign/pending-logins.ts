// Logins that went to the identity provider and have not come back yet: kept in memory by state,
// each usable once (take), expiring after a while, and bounded in number (the oldest gives way).
import { ExpiringMap } from './expiring-map.js'

export interface PendingLogin {
  codeVerifier: string
  /** Local path to return to after the login. */
  redirectPath: string
}

export class PendingLogins extends ExpiringMap<PendingLogin> {}
