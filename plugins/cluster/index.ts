// cluster: the [cluster] section (the cluster's name, default domain and ACME contact, how nodes join,
// and the etcd masters share state in) and, with [cluster].etcd set, the control plane's state in
// etcd and the election of the master that leads. Control-plane plugins keep what they must not lose
// in `stateFor(ctx)`: their own LMDB store on a lone master, their part of the shared state on etcd.
// Depends on nothing, so every control-plane plugin can use it.
import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify'
import type { KeyValueStore, PluginContext } from '../../kernel/index.js'
import { definePlugin } from '../../kernel/index.js'
import { clusterCommands } from './commands.js'
import { clusterSection, type ClusterConfig } from './config.js'
import type { ClusterControl } from './control.js'

export type { ClusterConfig }
export { CLUSTER_CODES } from './errors.js'
export type { MastersReport } from './masters.js'

export interface ClusterService {
  /** The [cluster] section. */
  settings: ClusterConfig
  /**
   * The store of what `ctx`'s plugin must not lose: its part of the shared state with [cluster].etcd,
   * else its own LMDB store. `fenced`: every write carries the leader's authority, and is refused
   * (503, BERTH_LEADERSHIP_LOST) unless this master leads.
   */
  stateFor(ctx: Pick<PluginContext, 'name' | 'store'>, options?: { fenced?: boolean }): KeyValueStore
  /**
   * The cluster's own state (the nodes plugin's registry, placement and published containers):
   * `leaderState` writes carry the leadership (refused unless this master leads), `state` writes do
   * not (a follower's acknowledgements). The same data; one store on a lone master.
   */
  state: KeyValueStore
  leaderState: KeyValueStore
  /** Whether this master leads now (always on a lone master). */
  isLeader(): boolean
  /**
   * Call `fn` whenever this master starts (true) or stops (false) leading; never on a lone master,
   * which always leads. Work that must run once checks `isLeader()` as it runs and starts again here.
   */
  onLeadership(fn: (leading: boolean) => void): void
  /**
   * An onRequest hook for routes only the leader carries out: a follower forwards the request to the
   * leader (forward.ts). Undefined on a lone master.
   */
  leaderOnly?: onRequestAsyncHookHandler
  /** The masters' election and shared state; undefined on a lone master. */
  control?: ClusterControl
}

declare module '../../kernel/index.js' {
  interface Services { cluster: ClusterService }
}

/** What a plugin with `optionalDependsOn: ['cluster']` must not lose is kept here: stateFor it, else its own store (`fenced`: see stateFor). */
export function controlState (ctx: PluginContext, options?: { fenced?: boolean }): KeyValueStore {
  return ctx.useOptional('cluster')?.stateFor(ctx, options) ?? ctx.store
}

/** `routes` carried out by the leader only: on a master that follows `cluster`, they are forwarded to the leader. */
export function leaderRoutes (cluster: ClusterService | undefined, routes: FastifyPluginAsync): FastifyPluginAsync {
  const hook = cluster?.leaderOnly
  if (hook === undefined) return routes
  return async (app, options) => {
    app.addHook('onRequest', hook)
    await routes(app, options)
  }
}

export default definePlugin({
  name: 'cluster',
  version: '0.2.0',
  product: 'orchestration',
  description: 'The cluster\'s settings; with etcd, the control plane shared by several masters and the election of their leader.',
  config: clusterSection,
  env: { BERTH_JOIN: 'join', BERTH_JOIN_TOKEN: 'join_token', BERTH_ETCD_PASSWORD: 'etcd.password' },

  async setup (ctx): Promise<ClusterService> {
    const { etcdSettings } = await import('./etcd.js')
    const settings = etcdSettings(ctx.config)
    if (settings === undefined) {
      return { settings: ctx.config, stateFor: owner => owner.store, state: ctx.store, leaderState: ctx.store, isLeader: () => true, onLeadership: () => {} }
    }
    const { openClusterControl } = await import('./control.js')
    const control = await openClusterControl(ctx, settings)
    return {
      settings: ctx.config,
      stateFor: (owner, options) => control.storeFor(owner.name, options?.fenced === true),
      state: control.storeFor(ctx.name, false),
      leaderState: control.storeFor(ctx.name, true),
      isLeader: () => control.leadership.isLeader(),
      onLeadership: fn => {
        const elected = (): void => { fn(true) }
        const lost = (): void => { fn(false) }
        control.leadership.on('elected', elected).on('lost', lost)
        ctx.onClose(() => { control.leadership.off('elected', elected).off('lost', lost) })
      },
      leaderOnly: control.leaderOnly,
      control
    }
  },

  async start (_ctx, service) {
    await service.control?.start()
  },

  async stop (_ctx, service) {
    await service.control?.stop()
  },

  commands: clusterCommands
})
