// Webhook registrations in the control plane's state (LMDB, or etcd, where other masters add and
// remove them too): {repo, service_name, branch, secret} under a random id. Listings never carry the
// secret. A store that cannot be read fails the start loudly rather than serving an empty list that
// would drop pushes.
import { randomBytes } from 'node:crypto'
import { BadRequest, NotFound, type KeyValueDatabase } from '../../kernel/index.js'
import { WEBHOOKS_CODES } from './errors.js'

/** The reserved service name: a push pulls the server's working directory and deploys what changed. */
export const INFRA = '__infra__'

export interface Registration {
  id: string
  repo: string
  service_name: string
  branch: string
  secret: string
  created_at: string
}

export type RegistrationInfo = Omit<Registration, 'secret'>

const REPO = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/
const SERVICE = /^[a-z0-9][a-z0-9_.-]*$/
const BRANCH = /^[^\s~^:?*[\\]+$/

export function publicView ({ secret: _secret, ...info }: Registration): RegistrationInfo {
  return info
}

/** A registration body checked field by field; every problem in one message. */
export function checkRegistration (body: unknown): Omit<Registration, 'id' | 'created_at'> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('expected a JSON object {repo, service_name, branch, secret}')
  const b = body as Record<string, unknown>
  const problems: string[] = []
  const field = (name: string, pattern: RegExp, what: string): string => {
    const value = b[name]
    if (typeof value !== 'string' || !pattern.test(value)) problems.push(`${name} must be ${what}`)
    return typeof value === 'string' ? value : ''
  }
  const repo = field('repo', REPO, '<owner>/<repo>')
  const service = field('service_name', new RegExp(`${SERVICE.source}|^${INFRA}$`), `a service name or ${INFRA}`)
  const branch = field('branch', BRANCH, 'a branch name')
  const secret = typeof b.secret === 'string' ? b.secret : ''
  if (secret.length < 16) problems.push('secret must be a string of at least 16 characters')
  const unknown = Object.keys(b).filter(k => !['repo', 'service_name', 'branch', 'secret'].includes(k))
  if (unknown.length > 0) problems.push(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`)
  if (problems.length > 0) throw new BadRequest(problems.join('; '))
  return { repo, service_name: service, branch, secret }
}

export class Registrations {
  readonly #db: KeyValueDatabase<Registration>

  /** Every registration is read once here, so a damaged store fails the start; later reads ask the store (other masters write it too). */
  constructor (db: KeyValueDatabase<Registration>) {
    this.#db = db
    for (const { key, value } of db.getRange()) {
      if (typeof value !== 'object' || value === null || typeof value.secret !== 'string' || typeof value.repo !== 'string') {
        throw new Error(`webhook registration ${String(key)} cannot be read: the store is damaged; restore it from a backup`)
      }
    }
  }

  list (): Registration[] {
    return [...this.#db.getRange()].map(({ value }) => value).sort((a, b) => a.created_at.localeCompare(b.created_at))
  }

  get (id: string): Registration {
    const found = this.#db.get(id)
    if (found === undefined) throw new NotFound(`no webhook with id ${id}`, { code: WEBHOOKS_CODES.NO_SUCH_WEBHOOK })
    return found
  }

  /** The registrations a push of `repo` to `branch` triggers. */
  matching (repo: string, branch: string): Registration[] {
    return this.list().filter(r => r.repo === repo && r.branch === branch)
  }

  async add (fields: Omit<Registration, 'id' | 'created_at'>): Promise<Registration> {
    const registration = { id: randomBytes(6).toString('hex'), ...fields, created_at: new Date().toISOString() }
    await this.#db.put(registration.id, registration)
    return registration
  }

  async remove (id: string): Promise<void> {
    this.get(id)
    await this.#db.remove(id)
  }
}
