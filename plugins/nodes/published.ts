// What agents run, published by the leader among masters on etcd so that every master's proxy routes
// to it: one key per agent node in the cluster's state (database `containers`), holding its
// containers as the leader reaches them (address resolved, not running while the node is offline,
// left out while draining). The leader writes a node's key only when it changed, then a version
// number (database `published`); a master that follows reads them all, tells its proxy which
// services changed, and acknowledges the version once its proxy has it, so that the leader's
// rollouts wait for every master's proxy before a replica stops (masters.ts of the nodes plugin).
import type { KeyValueDatabase } from '../../kernel/index.js'
import type { RemoteContainer } from '../reconciler/api.js'

const VERSION = 'version'
const ACK = 'ack:'

export class PublishedContainers {
  readonly #db: KeyValueDatabase<RemoteContainer[]>
  /** `version` (the leader's writes) and `ack:<member id>` for each master's acknowledged version (a follower's), in two handles of one table. */
  readonly #marks: KeyValueDatabase<number>
  readonly #acks: KeyValueDatabase<number>
  /** Each service's containers as last told to this master's proxy (JSON), on a follower. */
  #seen = new Map<string, string>()

  constructor (db: KeyValueDatabase<RemoteContainer[]>, marks: KeyValueDatabase<number>, acks: KeyValueDatabase<number>) {
    this.#db = db
    this.#marks = marks
    this.#acks = acks
  }

  /** Leader: write the nodes whose containers changed, remove the nodes that have none any more, and count a version when anything changed. */
  async publish (containers: readonly RemoteContainer[]): Promise<void> {
    const byNode = new Map<string, RemoteContainer[]>()
    for (const container of containers) byNode.set(container.node, [...(byNode.get(container.node) ?? []), container])
    let changed = false
    for (const [node, list] of byNode) {
      if (JSON.stringify(this.#db.get(node)) === JSON.stringify(list)) continue
      await this.#db.put(node, list)
      changed = true
    }
    for (const node of [...this.#db.getKeys()]) {
      if (byNode.has(node)) continue
      await this.#db.remove(node)
      changed = true
    }
    if (changed) await this.#marks.put(VERSION, this.version() + 1)
  }

  /** The version last published. */
  version (): number {
    return this.#marks.get(VERSION) ?? 0
  }

  /** Follower: its proxy has `version`. */
  async acknowledge (member: string, version: number): Promise<void> {
    await this.#acks.put(`${ACK}${member}`, version)
  }

  acknowledged (member: string): number {
    return this.#acks.get(`${ACK}${member}`) ?? 0
  }

  /** Follower: every container the leader published. */
  all (): RemoteContainer[] {
    return [...this.#db.getRange()].flatMap(({ value }) => value)
  }

  /** Follower: the services whose published containers changed since the last call. */
  changedServices (): string[] {
    const now = new Map<string, string>()
    const byService = new Map<string, RemoteContainer[]>()
    for (const container of this.all()) byService.set(container.service, [...(byService.get(container.service) ?? []), container])
    for (const [service, list] of byService) now.set(service, JSON.stringify(list))
    const changed = [...new Set([...now.keys(), ...this.#seen.keys()])].filter(service => now.get(service) !== this.#seen.get(service))
    this.#seen = now
    return changed
  }
}
