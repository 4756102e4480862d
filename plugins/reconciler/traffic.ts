// The seam between the reconciler and what routes traffic to containers (the proxy): a container is
// drained before it stops serving (removed, replaced, stopped, restarted), and after one starts the
// reconciler waits until it serves. With no router registered both are immediate.
import type { ContainerState } from './container-engine.js'
import type { ServiceSpec } from './spec.js'

export interface TrafficHooks {
  /** Take the container out of rotation and let its requests in flight finish. */
  drain(container: ContainerState): Promise<void>
  /** Resolve once the started container `id` of `spec` serves traffic; reject if it never does. */
  ready(spec: ServiceSpec, id: string): Promise<void>
}

export class Traffic implements TrafficHooks {
  readonly #routers = new Set<TrafficHooks>()

  /** Register a router; returns the function that unregisters it. */
  add (router: TrafficHooks): () => void {
    this.#routers.add(router)
    return () => { this.#routers.delete(router) }
  }

  async drain (container: ContainerState): Promise<void> {
    await Promise.all([...this.#routers].map(async router => { await router.drain(container) }))
  }

  async ready (spec: ServiceSpec, id: string): Promise<void> {
    await Promise.all([...this.#routers].map(async router => { await router.ready(spec, id) }))
  }
}
