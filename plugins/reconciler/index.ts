// reconciler: the orchestration core on one node. Reads services/*/service.toml, keeps the desired
// specs in LMDB, drives the container engine towards them (one list call, in-memory hash diffs,
// bounded parallelism), probes liveness, and serves the orchestration endpoints of the control API.
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { definePlugin, Type } from '../../kernel/index.js'
import { clusterInfo } from './cluster-info.js'
import { reconcilerCommands } from './commands.js'
import { Liveness } from './liveness.js'
import { Reconciler } from './reconciler.js'
import { dockerConfigFile } from './registry-auth.js'
import { reconcilerRoutes } from './routes.js'
import { RuntimeUnavailable, type Runtime } from './runtime.js'
import { ReconcilerState } from './state.js'

export interface ReconcilerService {
  reconciler: Reconciler
  liveness: Liveness
  /** Re-read liveness targets; an unreachable engine is logged, not thrown. */
  refreshLiveness(): Promise<void>
}

declare module '../../kernel/index.js' {
  interface Services { reconciler: ReconcilerService }
  interface BerthEvents { 'reconciler.changed': { services: string[] } }
}

/** How often liveness targets are re-read from the engine (containers restarted or removed outside Berth). */
const LIVENESS_REFRESH_MS = 15_000

const Config = Type.Object({
  services_dir: Type.String({ default: 'services', description: 'Folder of service files (<dir>/*/service.toml), relative to the working directory.' }),
  instance: Type.String({ default: 'berth', pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', description: 'Value of the berth.instance label; the server manages only containers carrying it, so several servers can share one engine.' }),
  publish_address: Type.String({ default: '127.0.0.1', description: 'Host address container ports (primary and extra_ports) are published on.' }),
  network: Type.String({ default: 'berth', description: 'Engine network for containers (created if missing; services reach each other by name). bridge, host or none use the engine\'s own.' }),
  docker_socket: Type.String({ default: '/var/run/docker.sock', description: 'Unix socket of the Docker engine.' }),
  parallelism: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'Container operations and pulls run at once during a deploy.' }),
  stop_timeout_secs: Type.Integer({ minimum: 0, default: 10, description: 'Seconds a container gets to stop before it is killed.' }),
  health_timeout_secs: Type.Integer({ minimum: 1, default: 60, description: 'Seconds a dependency may take to answer its health path before dependants fail.' }),
  logs_tail: Type.Integer({ minimum: 0, maximum: 100_000, default: 100, description: 'Lines of logs returned when a request gives no tail.' }),
  history_limit: Type.Integer({ minimum: 1, default: 200, description: 'Deploys kept in the history.' }),
  node_name: Type.String({ default: '', description: 'Name of this node (placement.node); empty means the host name.' }),
  registry_credentials: Type.String({ default: '', description: 'Credential file with registry logins (config.json of docker login); empty means $DOCKER_CONFIG/config.json or ~/.docker/config.json.' })
}, { additionalProperties: false })

export default definePlugin({
  name: 'reconciler',
  version: '0.1.0',
  description: 'Deploys services/*/service.toml to the container engine and keeps them running.',
  dependsOn: ['tokens', 'secrets'],
  config: Config,
  env: { BERTH_DOCKER_SOCKET: 'docker_socket', BERTH_PUBLISH_ADDRESS: 'publish_address' },

  async setup (ctx) {
    const config = ctx.config
    const nodeName = config.node_name === '' ? hostname() : config.node_name
    const state = new ReconcilerState(ctx.store, config.history_limit)
    // Loaded here, not at the top: `berth` commands load this file and never need the engine client.
    const { DockerRuntime } = await import('./docker-runtime.js')
    const docker = new DockerRuntime({
      socket: config.docker_socket, instance: config.instance, publish_address: config.publish_address,
      network: config.network, stop_timeout_secs: config.stop_timeout_secs,
      credentials_file: config.registry_credentials === '' ? dockerConfigFile() : resolve(ctx.cwd, config.registry_credentials)
    })
    const runtimes = new Map<string, Runtime>([[docker.name, docker]])
    const restarts = ctx.metrics.counter({ name: 'berth_reconciler_liveness_restarts_total', help: 'Containers restarted after failing liveness probes.', labelNames: ['service'] })
    const deploySeconds = ctx.metrics.histogram({ name: 'berth_reconciler_deploy_seconds', help: 'Duration of deploys, by trigger.', labelNames: ['trigger'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] })

    const liveness = new Liveness({
      runtime: name => runtimes.get(name) as Runtime,
      containers: async () => await reconciler.containers(),
      spec: service => state.service(service)?.spec,
      restarted: async service => {
        await state.countRestart(service)
        restarts.labels(service).inc()
        ctx.events.emit('reconciler.changed', { services: [service] })
      },
      log: ctx.log
    })
    const refreshLiveness = async (): Promise<void> => {
      try {
        await liveness.refresh()
      } catch (err) {
        if (!(err instanceof RuntimeUnavailable)) throw err
        ctx.log.debug({ err: err.message }, 'liveness not refreshed')
      }
    }
    const reconciler = new Reconciler({
      runtimes,
      state,
      secrets: ctx.use('secrets'),
      settings: { ...config, cwd: ctx.cwd, node_name: nodeName },
      log: ctx.log,
      deploySeconds,
      changed: services => {
        ctx.events.emit('reconciler.changed', { services })
        void refreshLiveness().catch((err: unknown) => { ctx.log.error({ err }, 'liveness refresh failed') })
      }
    })

    ctx.http('control', reconcilerRoutes({
      reconciler,
      tokens: ctx.use('tokens'),
      defaultTail: config.logs_tail,
      clusterInfo: async () => await clusterInfo(state, { name: nodeName, address: ctx.address('control'), instance: config.instance, runtime: docker })
    }), { prefix: '/api/v1' })
    ctx.schedule.every('liveness-refresh', LIVENESS_REFRESH_MS, refreshLiveness)
    const service: ReconcilerService = { reconciler, liveness, refreshLiveness }
    return service
  },

  /** Adopt what runs: containers are found by their labels; liveness probing starts for them. */
  async start (_ctx, service) {
    await service.refreshLiveness()
  },

  stop (_ctx, service) {
    service.liveness.stop()
  },

  commands: reconcilerCommands
})
