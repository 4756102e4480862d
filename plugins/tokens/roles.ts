// Roles of control API tokens. The operators' roles are ordered, each allowed what the ones before it
// are: viewer < deployer < admin. `agent` stands apart: the credential an agent node joins the cluster
// with, admitted to the join channel only, and no operator token (admin included) is admitted there.
export const OPERATOR_ROLES = ['viewer', 'deployer', 'admin'] as const
export const ROLES = [...OPERATOR_ROLES, 'agent'] as const
export type Role = typeof ROLES[number]

export function isRole (value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

/** A project name a viewer's or deployer's token may be limited to (a DNS label, as service files give it). */
export const PROJECT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Whether a token holding `held` may call an endpoint that needs `needed`. */
export function allows (held: Role, needed: Role): boolean {
  if (held === 'agent' || needed === 'agent') return held === needed
  return OPERATOR_ROLES.indexOf(held) >= OPERATOR_ROLES.indexOf(needed)
}
