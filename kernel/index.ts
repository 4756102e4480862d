// The kernel's public surface for plugin authors and embedders. It loads nothing heavy (no fastify,
// LMDB or TypeBox), so that every `berth` command can read every plugin definition quickly; the
// kernel itself is imported when a kernel is created, TypeBox for runtimes from './schema.js', and
// what only runtimes use (LMDB state, outbound HTTP, schedules, exports, PostgreSQL) from './runtime-api.js'.
import type { Kernel, KernelOptions } from './kernel.js'

export { definePlugin, type AnyPlugin, type ErrorBody, type ErrorFormat, type HealthCheck, type HealthDetails, type PluginContext, type PluginDefinition, type PluginState, type SectionSchema, type ServeOptions, type Services, type TypeBuilder } from './plugin.js'
export { CONTROL_LISTENER, type ListenerDeclaration } from './listeners.js'
export type { BerthEvents, EventName, OperatorAlert } from './events.js'
export type { BackupExtra, BackupSummary, PluginStore, DatabaseOptions } from './store.js'
export type { Exposition, PluginMetrics } from './metrics.js'
export type { CliRegistry, CliSettings } from './cli/cli-registry.js'
export { UsageError } from './cli/cli-registry.js'
export { ApiClient } from './cli/cli-client.js'
export { ADMIN_TOKEN_FILE, controlClient } from './cli/control-client.js'
export { formatTable } from './cli/cli-table.js'
export { isAlive, readPid } from './cli/pidfile.js'
export type { Kernel, KernelOptions, HealthReport } from './kernel.js'
export * from './errors.js'
export { besideSource, PACKAGE_ROOT, VERSION } from './paths.js'
export type { KeyRange, KeyValueDatabase, KeyValueStore } from './key-value.js'

/** Read plugins and config, and return a kernel ready to start (the kernel module is loaded on first use). */
export async function createKernel (options: KernelOptions = {}): Promise<Kernel> {
  const kernel = await import('./kernel.js')
  return await kernel.createKernel(options)
}
