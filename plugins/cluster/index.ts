// cluster: the [cluster] section (the cluster's name, default domain and ACME contact, how nodes join,
// and the etcd masters share state in) and, with [cluster].etcd set, the control plane's state in
// etcd and the election of the master that leads. Control-plane plugins keep what they must not lose
// in `stateFor(ctx)`: their own LMDB store on a lone master, their part of the shared state on etcd.
// Depends on nothing, so every control-plane plugin can use it.
import type { KeyValueStore, PluginContext } from '../../kernel/index.js'
import { definePlugin } from '../../kernel/index.js'
import { clusterSection, type ClusterConfig } from './config.js'
import type { ClusterControl } from './control.js'

export type { ClusterConfig }

export interface ClusterService {
  /** The [cluster] section. */
  settings: ClusterConfig
  /**
   * The store of what `ctx`'s plugin must not lose: its part of the shared state with [cluster].etcd,
   * else its own LMDB store. `fenced`: every write carries the leader's authority, and is refused
   * (503, BERTH_LEADERSHIP_LOST) unless this master leads.
   */
  stateFor(ctx: Pick<PluginContext, 'name' | 'store'>, options?: { fenced?: boolean }): KeyValueStore
  /** The cluster's own state (the nodes plugin's registry and placement): stateFor the cluster plugin. */
  state: KeyValueStore
  /** Whether this master leads now (always on a lone master). */
  isLeader(): boolean
  /** The masters' election and shared state; undefined on a lone master. */
  control?: ClusterControl
}

declare module '../../kernel/index.js' {
  interface Services { cluster: ClusterService }
}

/** What a plugin with `optionalDependsOn: ['cluster']` must not lose is kept here: stateFor it, else its own store. */
export function controlState (ctx: PluginContext): KeyValueStore {
  return ctx.useOptional('cluster')?.stateFor(ctx) ?? ctx.store
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
      return { settings: ctx.config, stateFor: owner => owner.store, state: ctx.store, isLeader: () => true }
    }
    const { openClusterControl } = await import('./control.js')
    const control = await openClusterControl(ctx, settings)
    return {
      settings: ctx.config,
      stateFor: (owner, options) => control.storeFor(owner.name, options?.fenced === true),
      state: control.storeFor(ctx.name, false),
      isLeader: () => control.leadership.isLeader(),
      control
    }
  },

  async start (_ctx, service) {
    await service.control?.start()
  },

  async stop (_ctx, service) {
    await service.control?.stop()
  }
})
