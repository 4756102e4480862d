// The ingest plugin's contract with the plugins that build on telemetry (symbolication): the events it
// emits, where uploaded ELF files are kept (localElf: a build's file on this node, written from the
// storage when it was uploaded to another node) and the code in them, and the keys of stored faults and of faults waiting for
// their symbols. Other plugins import the ingest plugin through this module or its index only.
export type { TelemetryEvent } from './apply.js'
export { codeSections, sectionNamed, type CodeSection } from './elf.js'
export { elfPath, localElf } from './elf-files.js'
export { faultKey, pendingKey, type PendingKey, type SeriesKey, type StoredFault } from './store.js'
export type { BacktraceFrame } from './storage/contract.js'
