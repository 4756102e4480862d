// reconciler: the orchestration core on one node. Reads services/*/service.toml, keeps the desired
// specs in LMDB, drives the container engine towards them (one list call, in-memory hash diffs,
// bounded parallelism), repairs what the engine loses between deploys, probes liveness, and serves
// the orchestration endpoints of the control API.
import type { Static } from '@sinclair/typebox'
import { definePlugin, type SectionSchema } from '../../kernel/index.js'
import { reconcilerCommands } from './commands.js'
import type { Liveness } from './liveness.js'
import type { Reconciler } from './reconciler.js'
import type { RepairLoop } from './repair.js'
import type { ContainerEngine } from './container-engine.js'
import type { Traffic } from './traffic.js'

export interface ReconcilerService {
  reconciler: Reconciler
  liveness: Liveness
  /** Continuous reconcile; undefined when [reconciler].repair_interval_secs is 0. */
  repairs: RepairLoop | undefined
  /** Re-read liveness targets; an unreachable engine is logged, not thrown. */
  refreshLiveness(): Promise<void>
  /** Where a router (the proxy) registers to drain containers before they go and to say when new ones serve. */
  traffic: Traffic
  /** This node: its name ([reconciler].node_name or the host name) and its id (random, made on first boot and kept). */
  node: { name: string, id(): Promise<string> }
  /** The container engine of this node. */
  engine: ContainerEngine
  /** The folder service files are read from (absolute), one sub-folder per project holding service.toml. */
  servicesDir: string
  /**
   * Containers of these services changed on other nodes of a cluster (an agent joined, reported its
   * containers or went away): the reconciler tells the routers, as after its own changes (`reconciler.changed`).
   */
  changedElsewhere(services: string[]): void
}

declare module '../../kernel/index.js' {
  interface Services { reconciler: ReconcilerService }
  interface BerthEvents { 'reconciler.changed': { services: string[] } }
}

const reconcilerSection = ((Type) => Type.Object({
  services_dir: Type.String({ default: 'services', description: 'Folder of service files (<dir>/*/service.toml), relative to the working directory.' }),
  instance: Type.String({ default: 'berth', pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', description: 'Value of the berth.instance label; the server manages only containers carrying it, so several servers can share one engine.' }),
  publish_address: Type.String({ default: '127.0.0.1', description: 'Host address container ports (primary and extra_ports) are published on.' }),
  network: Type.String({ default: 'berth', description: 'Engine network for containers (created if missing; services reach each other by name). bridge, host or none use the engine\'s own.' }),
  docker_socket: Type.String({ default: '/var/run/docker.sock', description: 'Unix socket of the Docker engine.' }),
  parallelism: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'Container operations and pulls run at once during a deploy.' }),
  stop_timeout_secs: Type.Integer({ minimum: 0, default: 10, description: 'Seconds a container gets to stop before it is killed.' }),
  health_timeout_secs: Type.Integer({ minimum: 1, default: 60, description: 'Seconds a dependency, or a replacement in a rollout, may take to pass its health checks.' }),
  repair_interval_secs: Type.Integer({ minimum: 0, default: 5, description: 'Seconds between repair passes (missing replicas created, stopped ones started, strays removed; also soon after the engine reports a container lost, and when it answers again); 0 turns continuous repair off.' }),
  logs_tail: Type.Integer({ minimum: 0, maximum: 100_000, default: 100, description: 'Lines of logs returned when a request gives no tail.' }),
  history_limit: Type.Integer({ minimum: 1, default: 200, description: 'Deploys kept in the history.' }),
  builds_kept: Type.Integer({ minimum: 1, default: 5, description: 'Images kept per built service (the newest; rollback to an older build needs it built again).' }),
  node_name: Type.String({ default: '', description: 'Name of this node (placement.node); empty means the host name.' }),
  allowed_host_paths: Type.Array(Type.String(), { default: [], description: 'Host folders (relative to the working directory, or absolute) that bind mounts, local git sources and the build contexts of deploy requests may be inside. Empty: none, only named volumes. The state directory, the engine\'s socket and data and the host\'s system folders are refused whatever this says.' }),
  host_ports: Type.String({ default: '1024-65535', description: 'Host ports extra_ports may publish, "<first>-<last>"; empty: none. The ports of this server\'s listeners are refused whatever this says.' }),
  build_registry: Type.String({ default: '', description: 'Registry (host[:port][/path]) that images built from sources are pushed to, as <registry>/<project>-<service>:<hash>, so that agents and rollbacks pull them; empty: built images stay on the node that built them (berth-build/...).' }),
  registry_credentials: Type.String({ default: '', description: 'Credential file with registry logins (config.json of docker login); empty means $DOCKER_CONFIG/config.json or ~/.docker/config.json.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type ReconcilerConfig = Static<ReturnType<typeof reconcilerSection>>

export default definePlugin({
  name: 'reconciler',
  version: '0.1.0',
  product: 'orchestration',
  description: 'Deploys services/*/service.toml to the container engine and keeps them running.',
  dependsOn: ['tokens', 'secrets'],
  optionalDependsOn: ['cluster'],
  config: reconcilerSection,
  env: { BERTH_DOCKER_SOCKET: 'docker_socket', BERTH_PUBLISH_ADDRESS: 'publish_address' },

  async setup (ctx) {
    const { setupReconciler } = await import('./setup.js')
    return setupReconciler(ctx)
  },

  /** Adopt what runs: containers are found by their labels; liveness probing starts for them, and repairs with the engine's events. */
  async start (ctx, service) {
    await service.refreshLiveness()
    service.repairs?.start().catch((err: unknown) => { ctx.log.error({ err }, 'the repair loop ended') })
  },

  stop (_ctx, service) {
    service.repairs?.stop()
    service.liveness.stop()
  },

  commands: reconcilerCommands
})
