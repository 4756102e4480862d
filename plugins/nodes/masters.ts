// Masters on etcd, as the nodes plugin sees them. The leader publishes what agents run
// (published.ts) at every check and at every step of a rollout, and the rollout's drain and ready
// steps wait (at most FOLLOWER_WAIT_MS) until every other master alive has acknowledged that
// version: so no master's proxy still sends requests to a replica about to stop, and each knows the
// new replica before the old one is drained. A master that follows polls the version, has its proxy
// rebuild the routes of the services that changed, and acknowledges the version at the next poll
// (once its proxy has rebuilt).
import type { Logger } from 'pino'
import type { ClusterService } from '../cluster/index.js'
import type { ContainerState, RemoteContainer, TrafficHooks } from '../reconciler/api.js'
import type { PublishedContainers } from './published.js'

/** How often a follower looks for a new version. */
export const FOLLOW_INTERVAL_MS = 100
/** Longest wait of a rollout step for the other masters' proxies. */
const FOLLOWER_WAIT_MS = 3000

type Control = NonNullable<ClusterService['control']>

export interface MastersDeps {
  control: Control
  published: PublishedContainers
  /** The agents' containers as the leader reaches them. */
  remote(): RemoteContainer[]
  leading(): boolean
  /** Tell this master's proxy that these services' containers changed. */
  changed(services: string[]): void
  log: Logger
}

export class Masters {
  readonly #deps: MastersDeps
  /** Containers being drained: left out of what is published. */
  readonly #draining = new Set<string>()
  #seenVersion = -1
  #pendingAck: number | undefined
  #publishing: Promise<void> = Promise.resolve()

  constructor (deps: MastersDeps) {
    this.#deps = deps
  }

  /** Leader: publish what agents run now (one publication at a time). */
  async publish (): Promise<void> {
    const next = this.#publishing.then(async () => {
      const containers = this.#deps.remote()
      const present = new Set(containers.map(c => c.id))
      for (const id of this.#draining) if (!present.has(id)) this.#draining.delete(id)
      await this.#deps.published.publish(containers.filter(c => !this.#draining.has(c.id)))
    })
    this.#publishing = next.catch(() => {})
    await next
  }

  /** Leader: the rollout hooks that make every master's proxy follow each step. */
  traffic (): TrafficHooks {
    return {
      drain: async (container: ContainerState) => {
        this.#draining.add(container.id)
        await this.#stepPublished()
      },
      ready: async () => { await this.#stepPublished() }
    }
  }

  /** Follower: apply a new version to this master's proxy; acknowledge the one applied at the previous poll. */
  async follow (): Promise<void> {
    if (this.#deps.leading()) return
    const { published, control } = this.#deps
    if (this.#pendingAck !== undefined) {
      const version = this.#pendingAck
      this.#pendingAck = undefined
      await published.acknowledge(control.self.id, version)
    }
    const version = published.version()
    if (version === this.#seenVersion) return
    this.#seenVersion = version
    const services = published.changedServices()
    if (services.length > 0) this.#deps.changed(services)
    this.#pendingAck = version
  }

  async #stepPublished (): Promise<void> {
    if (!this.#deps.leading()) return
    await this.publish()
    const version = this.#deps.published.version()
    const { control } = this.#deps
    const root = `${control.prefix}masters/`
    const deadline = Date.now() + FOLLOWER_WAIT_MS
    for (;;) {
      const others = (await control.client.getAll().prefix(root).keys()).map(key => key.slice(root.length)).filter(id => id !== control.self.id)
      const behind = others.filter(id => this.#deps.published.acknowledged(id) < version)
      if (behind.length === 0) return
      if (Date.now() >= deadline) {
        this.#deps.log.warn({ masters: behind, version }, `masters ${behind.join(', ')} did not take the routes' change within ${FOLLOWER_WAIT_MS} ms: the rollout goes on`)
        return
      }
      await new Promise(resolve => setTimeout(resolve, FOLLOW_INTERVAL_MS / 2))
    }
  }
}
