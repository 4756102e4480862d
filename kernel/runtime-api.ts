// The kernel's surface for plugin runtimes beyond kernel/index.ts: what a server uses and a `berth`
// command never needs, kept apart so that commands load none of it (LMDB, undici, croner, csv-stringify,
// pg, smol-toml): state directories opened outside a kernel, outbound HTTP, schedule checks, exports,
// PostgreSQL, TOML files; and the runtimes' helpers (HTTP errors' paths, storage faults, reachability
// checks, built UIs, coalesced calls), which the commands' modules need not load either.
export { openPluginState } from './store.js'
export { DestinationRefused, OutboundClient, redactedUrl, type OutboundAnswer, type OutboundRequest } from './outbound.js'
export { cronProblem } from './scheduler.js'
export { readToml } from './toml.js'
export { exportCell, exportFormat, sendExport, EXPORT_FORMATS, type ExportFormat } from './export-stream.js'
export { inTransaction, migrateSchema, redactUrl, unreachable, type Migration } from './postgres.js'
export { describeHttpError, pathOf } from './http-errors.js'
export { StorageFault, assertRoom, isStorageFault } from './storage-fault.js'
export { reachabilityCheck } from './reachability.js'
export { loadBuiltUi } from './ui-assets.js'
export { coalesced } from './coalesce.js'
