// The storage contract on LMDB (the embedded default): the kernel store's databases of store.ts, with
// the in-process device turns of device-locks.ts. Puts issued in one event turn commit as one
// transaction, whose B-tree work runs on lmdb-js's write thread.
import type { Database } from 'lmdb'
import { markTime } from '../chunk-marks.js'
import { issueOf, pcIssue, type CrashIssue, type IssueEvent, type IssueMember, type MemberKind, type Occurrence } from '../crash-issues.js'
import { seenKey, type TelemetryStore } from '../store.js'
import {
  faultKey, pendingKey, type Device, type DeviceChange, type DocumentKind, type ElfFile, type ElfUpload, type Group, type IngestReads, type IngestSession,
  type IngestWrites, type IssueFaultKey, type OtaTarget, type PendingKey, type SeriesKey, type SeriesKind, type SeriesRecord, type StoredFault, type SymbolUpdate,
  type TelemetryStorage
} from './contract.js'
import { applyToIssues, groupNewFaults, moveToSymbolIssue } from './lmdb-issues.js'

/** Past every key of a build in `pendingFaults` (keys of one build start with [build]). */
const END = '\uffff'
/** Mark in `meta`: faults stored before crash issues existed have been grouped. */
const ISSUES_GROUPED = 'issues-grouped'
/** Faults grouped per transaction when older ones are counted into their issues. */
const GROUP_BATCH = 1000

export class LmdbStorage implements TelemetryStorage {
  readonly backend = 'lmdb'
  readonly #store: TelemetryStore

  constructor (store: TelemetryStore) {
    this.#store = store
  }

  async open (): Promise<number> {
    const indexed = await this.#store.indexPendingFaults()
    await this.#groupUngroupedFaults()
    return indexed
  }

  async close (): Promise<void> {}

  async announce (): Promise<void> {}

  async listen (): Promise<void> {}

  async scheduled (_name: string, _everyMs: number, work: () => Promise<unknown>): Promise<boolean> {
    await work()
    return true
  }

  async ingest<T> (devices: Iterable<string>, work: (session: IngestSession) => Promise<T>): Promise<T> {
    const store = this.#store
    const session: IngestSession = {
      read: async (ids, marks, keys) => readFor(store, ids, marks, keys),
      write: async writes => {
        if (writes.faults.length === 0) {
          await issue(store, writes)
          return []
        }
        // Faults join their issues in the transaction that stores them (issue counts read and written in it).
        return await store.transaction(() => {
          const events = groupNewFaults(store, writes.faults)
          void issue(store, writes)
          return events
        })
      }
    }
    return await store.locks.run(devices, async () => await work(session))
  }

  async device (id: string): Promise<Device | undefined> {
    return this.#store.devices.get(id)
  }

  devices (after?: string): AsyncIterable<Device> {
    return valuesAfter(this.#store.devices, after)
  }

  async changeDevice (id: string, change: (current: Device | undefined) => DeviceChange | undefined): Promise<Device | undefined> {
    const store = this.#store
    return await store.locks.run([id], async () => await store.transaction(() => {
      const next = change(store.devices.get(id))
      if (next === undefined) return undefined
      if (next.key instanceof Uint8Array) store.keys.put(id, next.key)
      if (next.key === null) store.keys.remove(id)
      store.devices.put(id, next.device)
      return next.device
    }))
  }

  async deleteDevice (id: string): Promise<boolean> {
    const store = this.#store
    return await store.locks.run([id], async () => await store.transaction(() => {
      if (store.devices.get(id) === undefined) return false
      store.removeSeries(id, Number.MAX_SAFE_INTEGER)
      for (const key of store.seen.getKeys({ start: `${id}:`, end: `${id};` })) store.seen.remove(key)
      store.keys.remove(id)
      store.devices.remove(id)
      return true
    }))
  }

  async silentDevices (before: number): Promise<string[]> {
    const silent: string[] = []
    for (const { key, value } of this.#store.devices.getRange()) if (!value.offline && value.last_seen !== null && value.last_seen < before) silent.push(key)
    return silent
  }

  async markOffline (ids: readonly string[], silent: (device: Device) => boolean): Promise<Device[]> {
    const store = this.#store
    return await store.locks.run(ids, async () => await store.transaction(() => {
      const marked: Device[] = []
      for (const id of ids) {
        const device = store.devices.get(id)
        if (device === undefined || !silent(device)) continue
        const next = { ...device, offline: true }
        store.devices.put(id, next)
        marked.push(next)
      }
      return marked
    }))
  }

  async * series<K extends SeriesKind> (kind: K, start: SeriesKey, end: number, exclusive = false): AsyncIterable<{ key: SeriesKey, value: SeriesRecord[K] }> {
    const db = this.#store[kind]
    const first = JSON.stringify(start)
    for (const { key, value } of db.getRange({ start, end: [start[0], end] })) {
      if (exclusive && JSON.stringify(key) === first) continue
      yield { key, value: value as SeriesRecord[K] }
    }
  }

  async * faultsSince (since: number): AsyncIterable<StoredFault> {
    for (const { value } of this.#store.faults.getRange()) {
      if (value.received_at >= since) yield value
    }
  }

  async faultCount (since: number, issue: string | null): Promise<number> {
    let count = 0
    for (const { value } of this.#store.faults.getRange()) if (value.received_at >= since && (issue === null || value.issue === issue)) count++
    return count
  }

  async latestMetrics (key: string, since: number, until: number, group: string | null): Promise<Map<string, number>> {
    const latest = new Map<string, number>()
    for (const { key: id, value: device } of this.#store.devices.getRange()) {
      if (group !== null && device.group !== group) continue
      for (const { value } of this.#store.metrics.getRange({ start: [id, since], end: [id, until] })) if (value.key === key) latest.set(id, value.value)
    }
    return latest
  }

  async chunkCount (): Promise<number> {
    return this.#store.seen.getKeysCount()
  }

  async deleteBefore (cutoff: number): Promise<number> {
    const store = this.#store
    return await store.transaction(() => {
      let removed = 0
      for (const device of store.devices.getKeys()) removed += store.removeSeries(device, cutoff)
      for (const { key, value } of store.seen.getRange()) {
        if (markTime(value) < cutoff) store.seen.remove(key)
      }
      return removed
    })
  }

  async group (name: string): Promise<Group | undefined> {
    return this.#store.groups.get(name)
  }

  groups (after?: string): AsyncIterable<Group> {
    return valuesAfter(this.#store.groups, after)
  }

  async createGroup (group: Group): Promise<boolean> {
    const groups = this.#store.groups
    return await groups.ifNoExists(group.name, () => { groups.put(group.name, group) })
  }

  async putGroup (group: Group): Promise<void> {
    await this.#store.groups.put(group.name, group)
  }

  async removeGroup (name: string): Promise<void> {
    await this.#store.groups.remove(name)
  }

  async groupMembers (name: string): Promise<number> {
    return [...this.#store.devices.getRange().filter(e => e.value.group === name)].length
  }

  async otaTarget (id: string): Promise<OtaTarget | undefined> {
    return this.#store.ota.get(id)
  }

  otaTargets (after?: string): AsyncIterable<OtaTarget> {
    return valuesAfter(this.#store.ota, after)
  }

  async putOtaTarget (target: OtaTarget): Promise<void> {
    await this.#store.ota.put(target.id, target)
  }

  async removeOtaTarget (id: string): Promise<void> {
    await this.#store.ota.remove(id)
  }

  async elf (buildId: string): Promise<ElfFile | undefined> {
    return this.#store.elves.get(buildId)
  }

  async elves (): Promise<ElfFile[]> {
    return [...this.#store.elves.getRange()].map(({ value }) => value)
  }

  async putElf ({ record, version }: ElfUpload): Promise<void> {
    const store = this.#store
    await store.transaction(() => {
      store.elves.put(record.build_id, record)
      if (version !== null) store.versions.put(version, record.build_id)
    })
  }

  async elfBytes (): Promise<Buffer | undefined> {
    return undefined
  }

  async pendingBuilds (): Promise<string[]> {
    const builds: string[] = []
    let start: PendingKey | [string, string] | undefined
    for (;;) {
      const [first] = [...this.#store.pendingFaults.getKeys({ start, limit: 1 })]
      if (first === undefined) return builds
      builds.push(first[0])
      start = [first[0], END]
    }
  }

  async pendingFaults (buildId: string, after: PendingKey | undefined, limit: number): Promise<PendingKey[]> {
    return [...this.#store.pendingFaults.getKeys({ start: after ?? [buildId], exclusiveStart: after !== undefined, end: [buildId, END], limit })]
  }

  async isPending (key: PendingKey): Promise<boolean> {
    return this.#store.pendingFaults.doesExist(key)
  }

  async fault (key: SeriesKey): Promise<StoredFault | undefined> {
    return this.#store.faults.get(key)
  }

  async setSymbols (updates: readonly SymbolUpdate[]): Promise<{ symbols: string[], events: IssueEvent[] }> {
    const store = this.#store
    return await store.transaction(() => {
      const symbols: string[] = []
      const occurrences: Occurrence[] = []
      for (const { key, symbol, backtrace, final } of updates) {
        const current = store.faults.get(faultKey(key))
        if (current === undefined || final) store.pendingFaults.remove(key)
        if (current === undefined || current.symbol === symbol) continue
        const next = final ? moveToSymbolIssue(store, current, { symbol, backtrace: backtrace ?? [] }) : { fault: { ...current, symbol }, occurrences: [] }
        store.faults.put(faultKey(key), next.fault)
        occurrences.push(...next.occurrences)
        symbols.push(symbol)
      }
      return { symbols, events: applyToIssues(store, occurrences) }
    })
  }

  async issues (): Promise<CrashIssue[]> {
    return [...this.#store.issues.getRange()].map(({ value }) => value)
  }

  async issue (id: string): Promise<CrashIssue | undefined> {
    return this.#store.issues.get(id)
  }

  async issueMembers (id: string, kind: MemberKind): Promise<IssueMember[]> {
    return [...this.#store.issueMembers.getRange({ start: [id, kind], end: [id, kind, END] })].map(({ value }) => value)
  }

  async issuesWith (kind: MemberKind, member: string): Promise<string[]> {
    const { issues, issueMembers } = this.#store
    return [...issues.getKeys()].filter(id => issueMembers.doesExist([id, kind, member]))
  }

  async deviceFaultCounts (): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    for (const { value } of this.#store.issueMembers.getRange()) if (value.kind === 'device') counts.set(value.member, (counts.get(value.member) ?? 0) + value.count)
    return counts
  }

  async issueFaults (id: string, before: IssueFaultKey | undefined, limit: number): Promise<StoredFault[]> {
    const { issueFaults, faults } = this.#store
    const found: StoredFault[] = []
    for (const [, at, device, sequence] of issueFaults.getKeys({ start: [id, ...before ?? [Number.MAX_SAFE_INTEGER]], end: [id], reverse: true, exclusiveStart: true })) {
      const fault = faults.get([device, at, sequence])
      if (fault !== undefined) found.push(fault)
      if (found.length >= limit) break
    }
    return found
  }

  async changeIssue (id: string, change: (current: CrashIssue) => CrashIssue): Promise<CrashIssue | undefined> {
    const { issues } = this.#store
    return await this.#store.transaction(() => {
      const current = issues.get(id)
      if (current === undefined) return undefined
      const next = change(current)
      void issues.put(id, next)
      return next
    })
  }

  async document<T> (kind: DocumentKind, id: string): Promise<T | undefined> {
    return this.#store.documents.get([kind, id]) as T | undefined
  }

  async documents<T> (kind: DocumentKind): Promise<T[]> {
    return [...this.#store.documents.getRange({ start: [kind], end: [kind, END] })].map(({ value }) => value as T)
  }

  async changeDocument<T> (kind: DocumentKind, id: string, change: (current: T | undefined) => T | null | undefined): Promise<T | undefined> {
    const { documents } = this.#store
    return await this.#store.transaction(() => {
      const current = documents.get([kind, id]) as T | undefined
      const next = change(current)
      if (next === undefined) return current
      if (next === null) void documents.remove([kind, id])
      else void documents.put([kind, id], next)
      return next ?? undefined
    })
  }

  async putBlob (id: string, bytes: Buffer): Promise<void> {
    await this.#store.blobs.put(id, bytes)
  }

  async blob (id: string): Promise<Buffer | undefined> {
    return this.#store.blobs.get(id)
  }

  async removeBlob (id: string): Promise<void> {
    await this.#store.blobs.remove(id)
  }

  /** Count faults stored before crash issues existed into their issues (once), a batch a transaction. */
  async #groupUngroupedFaults (): Promise<number> {
    const store = this.#store
    if (store.meta.get(ISSUES_GROUPED) !== undefined) return 0
    let grouped = 0
    let start: SeriesKey | undefined
    for (;;) {
      const batch = [...store.faults.getRange({ start, exclusiveStart: start !== undefined, limit: GROUP_BATCH })]
      if (batch.length === 0) break
      start = batch[batch.length - 1].key
      grouped += await store.transaction(() => {
        const occurrences: Occurrence[] = []
        for (const { key, value } of batch) {
          if (typeof value.issue === 'string') continue
          const issue = issueOf(value)
          const fault = { ...value, issue: issue.id }
          void store.faults.put(key, fault)
          if (issue.grouping === 'symbol' && store.issueAliases.get(pcIssue(fault).id) === undefined) void store.issueAliases.put(pcIssue(fault).id, issue)
          occurrences.push({ issue, fault, sign: 1 })
        }
        applyToIssues(store, occurrences)
        return occurrences.length
      })
    }
    await store.meta.put(ISSUES_GROUPED, true)
    return grouped
  }
}

/** The values of `db` in key order, after the key `after`. */
async function * valuesAfter<T> (db: Database<T, string>, after: string | undefined): AsyncIterable<T> {
  for (const { key, value } of db.getRange({ start: after ?? '' })) {
    if (key !== after) yield value
  }
}

function readFor (store: TelemetryStore, ids: readonly string[], pairs: ReadonlyArray<readonly [string, number]>, sealed: readonly string[]): IngestReads {
  const reads: IngestReads = { devices: new Map(), keys: new Map(), marks: new Map() }
  for (const id of ids) {
    const device = store.devices.get(id)
    if (device !== undefined) reads.devices.set(id, device)
  }
  for (const id of sealed) {
    const key = store.keys.get(id)
    if (key !== undefined) reads.keys.set(id, key)
  }
  for (const [device, sequence] of pairs) {
    const seen = seenKey(device, sequence)
    const mark = store.seen.get(seen)
    if (mark !== undefined) reads.marks.set(seen, mark)
  }
  return reads
}

/**
 * Issue every put. Inside a transaction callback they are part of that transaction; outside one,
 * lmdb-js puts issued in one event turn go into one transaction, and the promise of the last one
 * resolves once that transaction has committed. Records are written field by field as built.
 */
function issue (store: TelemetryStore, writes: IngestWrites): Promise<boolean> | undefined {
  let last: Promise<boolean> | undefined
  for (const r of writes.reboots) last = store.reboots.put([r.device, r.received_at, r.sequence], r)
  for (const f of writes.faults) {
    last = store.faults.put([f.device, f.received_at, f.sequence], f)
    last = store.pendingFaults.put(pendingKey(f), true)
  }
  for (const { metric: m, index } of writes.metrics) last = store.metrics.put([m.device, m.received_at, m.sequence, index], m)
  for (const t of writes.traces) last = store.traces.put([t.device, t.received_at, t.sequence], t)
  for (const h of writes.heartbeats) last = store.heartbeats.put([h.device, h.received_at, h.sequence], h)
  for (const { device, sequence, mark } of writes.marks) last = store.seen.put(seenKey(device, sequence), mark)
  for (const device of writes.devices) last = store.devices.put(device.id, device)
  return last
}
