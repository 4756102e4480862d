// The secret store: values sealed with AES-256-GCM in the control plane's state (LMDB, or etcd),
// listed by name only, and resolved into service environments (`${secrets.NAME}`) only when a
// container is created. A secret belongs to a project (stored as `<project>:<NAME>`) or is shared
// (stored as `<NAME>`, with every project or with those of its `shared_with`); a service resolves
// its own project's secret first, then a shared one it is shared with, and nothing else.
import type { KeyValueDatabase } from '../../kernel/index.js'
import { open, seal, type Sealed } from './cipher.js'
import { replaceReferences } from './references.js'

export interface SecretRecord extends Sealed {
  updated_at: string
  /** A shared secret's projects; absent: every project. Never on a project's own secret. */
  shared_with?: string[]
}

export interface SecretInfo {
  name: string
  updated_at: string
  /** The project it belongs to; absent for a shared secret. */
  project?: string
  /** A shared secret's projects; absent: every project (or a project's own secret). */
  shared_with?: string[]
}

/** Whether a project's services may use a secret: it is theirs or shared with them, it is another project's only, or there is none. */
export type SecretVisibility = 'visible' | 'hidden' | 'missing'

/** An environment refers to a secret that does not exist: names the service, the variable and the secret. */
export class UnknownSecret extends Error {}

/** The storage key: `<project>:<NAME>` for a project's secret, `<NAME>` for a shared one (also what its seal is bound to). */
function keyOf (name: string, project?: string): string {
  return project === undefined ? name : `${project}:${name}`
}

export class SecretStore {
  readonly #db: KeyValueDatabase<SecretRecord>
  readonly #key: Buffer

  constructor (db: KeyValueDatabase<SecretRecord>, key: Buffer) {
    this.#db = db
    this.#key = key
  }

  /** Store (or replace) a value, a project's or shared (with `sharedWith`, else every project); true when the name is new there. */
  async set (name: string, value: string, options: { project?: string, sharedWith?: readonly string[] } = {}): Promise<{ created: boolean, info: SecretInfo }> {
    const key = keyOf(name, options.project)
    const created = this.#db.get(key) === undefined
    const updated_at = new Date().toISOString()
    const sharedWith = options.project === undefined && options.sharedWith !== undefined ? [...new Set(options.sharedWith)].sort() : undefined
    await this.#db.put(key, { ...seal(this.#key, key, value), updated_at, ...(sharedWith !== undefined && { shared_with: sharedWith }) })
    return { created, info: infoOf(key, { updated_at, shared_with: sharedWith }) }
  }

  list (): SecretInfo[] {
    return [...this.#db.getRange()].map(({ key, value }) => infoOf(key, value))
  }

  has (name: string, project?: string): boolean {
    return this.#db.get(keyOf(name, project)) !== undefined
  }

  /** False when there was no such secret. */
  async remove (name: string, project?: string): Promise<boolean> {
    const key = keyOf(name, project)
    if (this.#db.get(key) === undefined) return false
    return await this.#db.remove(key)
  }

  /** The key of the secret `name` a service of `project` resolves (its own, else a shared one shared with it); undefined when none. */
  #visibleKey (name: string, project: string): string | undefined {
    if (this.#db.get(keyOf(name, project)) !== undefined) return keyOf(name, project)
    const shared = this.#db.get(name)
    return shared !== undefined && (shared.shared_with === undefined || shared.shared_with.includes(project)) ? name : undefined
  }

  visibility (name: string, project: string): SecretVisibility {
    if (this.#visibleKey(name, project) !== undefined) return 'visible'
    const elsewhere = this.#db.get(name) !== undefined || [...this.#db.getKeys()].some(key => key.endsWith(`:${name}`))
    return elsewhere ? 'hidden' : 'missing'
  }

  /**
   * `env` with every `${secrets.NAME}` replaced by the decrypted value: for a service (`project`), its
   * project's secrets and those shared with it; for the server's own settings (no project), shared ones.
   */
  resolve (env: Readonly<Record<string, string>>, subject: string, project?: string): Record<string, string> {
    const resolved: Record<string, string> = {}
    for (const [variable, value] of Object.entries(env)) {
      resolved[variable] = replaceReferences(value, name => {
        const key = project === undefined ? name : this.#visibleKey(name, project)
        const record = key === undefined ? undefined : this.#db.get(key)
        if (key === undefined || record === undefined) {
          const hint = project === undefined ? `berth secrets set ${name} <value>` : `berth secrets set ${name} <value> --project ${project}`
          throw new UnknownSecret(`service "${subject}": env.${variable} refers to unknown secret "${name}" (set it with: ${hint})`)
        }
        return open(this.#key, key, record)
      })
    }
    return resolved
  }
}

function infoOf (key: string, record: Pick<SecretRecord, 'updated_at' | 'shared_with'>): SecretInfo {
  const colon = key.indexOf(':')
  const name = colon === -1 ? key : key.slice(colon + 1)
  return { name, updated_at: record.updated_at, ...(colon !== -1 && { project: key.slice(0, colon) }), ...(record.shared_with !== undefined && { shared_with: record.shared_with }) }
}
