// The kernel's surface for plugin runtimes beyond kernel/index.ts: what a server uses and a `berth`
// command never needs, kept apart so that commands load none of it (LMDB, undici, croner, csv-stringify,
// pg, smol-toml): state directories opened outside a kernel, outbound HTTP, schedule checks, exports,
// PostgreSQL, TOML files.
export { openPluginState } from './store.js'
export { DestinationRefused, OutboundClient, redactedUrl, type OutboundAnswer, type OutboundRequest } from './outbound.js'
export { cronProblem } from './scheduler.js'
export { readToml } from './toml.js'
export { exportCell, exportFormat, sendExport, EXPORT_FORMATS, type ExportFormat } from './export-stream.js'
export { inTransaction, migrateSchema, redactUrl, unreachable, type Migration } from './postgres.js'
