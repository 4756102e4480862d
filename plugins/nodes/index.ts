// nodes: agent nodes join the leader. On the leader: the join channel, the node registry (heartbeats,
// engine health, offline after a silence, replicas placed elsewhere after a grace period), placement
// of every replica, drain and undrain. On an agent (`berth server --join <host>:6880`): the link to
// the leader, running what it sends with this node's reconciler. Reads the cluster plugin's [cluster]
// section, and keeps the registry and the assignment in the cluster's state.
import { definePlugin, VERSION } from '../../kernel/index.js'
import { nodeCommands } from './commands.js'
import type { ClusterRuntime } from './setup.js'

export interface NodesService {
  /** The leader's or the agent's machinery. */
  runtime: ClusterRuntime
}

declare module '../../kernel/index.js' {
  interface Services { nodes: NodesService }
}

export default definePlugin({
  name: 'nodes',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Agent nodes join the leader: placement, drain, heartbeats and failure handling.',
  dependsOn: ['cluster', 'tokens', 'secrets', 'reconciler'],

  async setup (ctx) {
    const { setupNodes } = await import('./setup.js')
    const { reconciler, node, engine, traffic, changedElsewhere } = ctx.use('reconciler')
    const cluster = ctx.use('cluster')
    const runtime = await setupNodes(ctx, {
      cluster,
      tokens: ctx.use('tokens'),
      secrets: ctx.use('secrets'),
      version: VERSION,
      orchestration: {
        nodeName: node.name,
        nodeId: node.id,
        engineInfo: async () => await engine.info(),
        localContainers: async () => await reconciler.localContainers(),
        specs: () => reconciler.specs(),
        useScheduler: scheduler => {
          reconciler.scheduler = scheduler
          ctx.onClose(() => { reconciler.scheduler = undefined })
        },
        managedBy: leader => {
          reconciler.leader = leader
          ctx.onClose(() => { reconciler.leader = undefined })
        },
        answerClusterInfo: answer => {
          reconciler.clusterInfo = answer
          ctx.onClose(() => { reconciler.clusterInfo = undefined })
        },
        applyAssigned: async (services, options) => await reconciler.applyAssigned(services, options),
        reschedule: async trigger => await reconciler.reschedule(trigger),
        stopAll: async () => await reconciler.stopAll(),
        restart: async service => await reconciler.restart(service),
        logs: async (service, tail) => await reconciler.localLogs(service, tail),
        containersChanged: changedElsewhere,
        traffic
      }
    })
    return { runtime }
  },

  async start (_ctx, service) {
    await service.runtime.start()
  },

  async stop (_ctx, service) {
    await service.runtime.stop()
  },

  commands: nodeCommands
})
