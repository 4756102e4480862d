// Roles of control API tokens, from least to most privileged: each role may do what the ones before it may.
export const ROLES = ['viewer', 'deployer', 'admin'] as const
export type Role = typeof ROLES[number]

export function isRole (value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

/** Whether a token holding `held` may call an endpoint that needs `needed`. */
export function allows (held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed)
}
