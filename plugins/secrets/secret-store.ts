// The secret store: values sealed with AES-256-GCM in the control plane's state (LMDB, or etcd),
// listed by name only, and resolved into service environments (`${secrets.NAME}`) only when a
// container is created.
import type { KeyValueDatabase } from '../../kernel/index.js'
import { open, seal, type Sealed } from './cipher.js'
import { replaceReferences } from './references.js'

export interface SecretRecord extends Sealed {
  updated_at: string
}

export interface SecretInfo {
  name: string
  updated_at: string
}

/** An environment refers to a secret that does not exist: names the service, the variable and the secret. */
export class UnknownSecret extends Error {}

export class SecretStore {
  readonly #db: KeyValueDatabase<SecretRecord>
  readonly #key: Buffer

  constructor (db: KeyValueDatabase<SecretRecord>, key: Buffer) {
    this.#db = db
    this.#key = key
  }

  /** Store (or replace) a value; true when the name is new. */
  async set (name: string, value: string): Promise<{ created: boolean, info: SecretInfo }> {
    const created = this.#db.get(name) === undefined
    const updated_at = new Date().toISOString()
    await this.#db.put(name, { ...seal(this.#key, name, value), updated_at })
    return { created, info: { name, updated_at } }
  }

  list (): SecretInfo[] {
    return [...this.#db.getRange()].map(({ key, value }) => ({ name: key, updated_at: value.updated_at }))
  }

  has (name: string): boolean {
    return this.#db.get(name) !== undefined
  }

  /** False when there was no secret of that name. */
  async remove (name: string): Promise<boolean> {
    if (this.#db.get(name) === undefined) return false
    return await this.#db.remove(name)
  }

  /** `env` with every `${secrets.NAME}` replaced by the decrypted value. */
  resolve (env: Readonly<Record<string, string>>, service: string): Record<string, string> {
    const resolved: Record<string, string> = {}
    for (const [variable, value] of Object.entries(env)) {
      resolved[variable] = replaceReferences(value, name => {
        const record = this.#db.get(name)
        if (record === undefined) throw new UnknownSecret(`service "${service}": env.${variable} refers to unknown secret "${name}" (set it with: berth secrets set ${name} <value>)`)
        return open(this.#key, name, record)
      })
    }
    return resolved
  }
}
