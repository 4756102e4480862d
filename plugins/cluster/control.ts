// The control plane shared by several masters ([cluster].etcd set): one etcd client, the shared state
// every control-plane plugin keeps its part of (shared-state/), and the election of the master that
// leads (leadership.ts). Opened at setup, before the plugins that keep state in it; the election
// runs from start, once the control listener's address is known, until the kernel begins to stop
// (this master then resigns at once). Imported by setup only.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Etcd3 } from 'etcd3'
import type { onRequestAsyncHookHandler } from 'fastify'
import { StartupError, messageOf, type KeyValueStore, type PluginContext } from '../../kernel/index.js'
import type { ClusterConfig } from './config.js'
import { etcdClient, renewIntervalMs, type EtcdSettings } from './etcd.js'
import { leaderOnly } from './forward.js'
import { Leadership, type LeaderIdentity } from './leadership.js'
import { describeMasters, type MastersReport } from './masters.js'
import { SharedState } from './shared-state/state.js'
import { SharedPluginStore } from './shared-state/view.js'

export interface ClusterControl {
  client: Etcd3
  state: SharedState
  leadership: Leadership
  /** This master as the leadership key and the masters' list name it. */
  self: LeaderIdentity
  /** The prefix of every key of the cluster. */
  prefix: string
  /** The hook of routes only the leader carries out (forward.ts). */
  leaderOnly: onRequestAsyncHookHandler
  /** The masters alive, the leader, and etcd's members with their health. */
  describe(): Promise<MastersReport>
  /** `plugin`'s part of the shared state; `fenced`: its writes carry this master's leadership. */
  storeFor(plugin: string, fenced: boolean): KeyValueStore
  /** Name this master after its node (`[reconciler].node_name`, given by the nodes plugin at setup, before the campaign starts); the host name otherwise. */
  nameSelf(name: string): void
  start(): Promise<void>
  stop(): Promise<void>
}

/** How often etcd's members are asked for their health. */
const ETCD_CHECK_MS = 10_000

/** A random id made on this master's first start and kept in its own store. */
async function memberId (ctx: PluginContext<ClusterConfig>): Promise<string> {
  const db = ctx.store.db<string, string>('member')
  const known = db.get('id')
  if (known !== undefined) return known
  const id = randomBytes(8).toString('hex')
  await db.put('id', id)
  return id
}

export async function openClusterControl (ctx: PluginContext<ClusterConfig>, settings: EtcdSettings): Promise<ClusterControl> {
  const client = await etcdClient(settings)
  let state: SharedState
  try {
    state = await SharedState.open({ client, prefix: settings.prefix, attemptMs: renewIntervalMs(settings) })
  } catch (err) {
    client.close()
    throw new StartupError(`[cluster].etcd: the control plane's state cannot be loaded from ${settings.endpoints.join(', ')}: ${messageOf(err)}`)
  }
  const self: LeaderIdentity = { id: await memberId(ctx), name: hostname(), address: '' }
  const leadership = new Leadership(client, { prefix: settings.prefix, leaseTtlSeconds: settings.leaseTtlSeconds, self })
  leadership.on('elected', () => {
    ctx.log.info({ member: self.id }, 'this master leads')
    ctx.report({ role: 'leader', member: self.id })
  })
  leadership.on('lost', reason => {
    ctx.log.warn({ member: self.id, reason }, `this master no longer leads: ${reason}`)
    ctx.report({ role: 'follower', member: self.id })
  })
  ctx.report({ role: 'follower', member: self.id })
  const describe = async (): Promise<MastersReport> => await describeMasters(client, settings, leadership.leader())
  // etcd's health in the health report: every member answering, some (degraded), none (down).
  ctx.schedule.every('etcd-health', ETCD_CHECK_MS, async () => {
    try {
      const { etcd } = await describe()
      const down = etcd.filter(member => !member.healthy)
      ctx.check('etcd', down.length === 0
        ? { status: 'ok', reason: `${etcd.length} member(s) healthy` }
        : { status: down.length < etcd.length ? 'degraded' : 'down', reason: down.map(member => `${member.name || member.endpoint}: ${member.error ?? 'unhealthy'}`).join('; ') })
    } catch (err) {
      ctx.check('etcd', { status: 'down', reason: `etcd cannot be asked (${messageOf(err)}): writes to the shared state are refused, reads answer from this master's copy` })
    }
  })
  // A clean stop resigns first thing, so that another master leads while this one drains and stops.
  let resigned: Promise<void> | undefined
  const resign = async (): Promise<void> => { await (resigned ??= leadership.stop()) }
  ctx.stopping.addEventListener('abort', () => { void resign() }, { once: true })
  const stores = new Map<string, KeyValueStore>()
  return {
    client,
    state,
    leadership,
    self,
    prefix: settings.prefix,
    describe,
    leaderOnly: leaderOnly({ isLeader: () => leadership.isLeader(), leader: async () => await leadership.findLeader(), self, log: ctx.log }),
    storeFor (plugin, fenced) {
      const name = `${plugin}${fenced ? ' fenced' : ''}`
      let store = stores.get(name)
      if (store === undefined) {
        store = new SharedPluginStore(state, plugin, fenced ? () => leadership.term() : undefined)
        stores.set(name, store)
      }
      return store
    },
    nameSelf (name) {
      self.name = name
    },
    async start () {
      self.address = ctx.address('control').href.replace(/\/$/, '')
      leadership.start()
    },
    async stop () {
      await resign()
      state.close()
      client.close()
    }
  }
}
