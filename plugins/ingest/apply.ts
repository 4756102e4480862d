// What an accepted chunk changes: the device record, and one of the time series. It only computes:
// the writes go into a batch the ingestor commits (see ingestor.ts), and the events it returns are
// published after that commit.
import type { Database, Key } from 'lmdb'
import type { Device, TelemetryStore } from './store.js'
import type { ChunkPayload } from './wire/payloads.js'

/** Writes gathered to be committed together: in a transaction, or as puts of one event turn. */
export class WriteBatch {
  readonly #entries: Array<{ db: Database<unknown, Key>, key: Key, value: unknown }> = []

  put<V, K extends Key> (db: Database<V, K>, key: K, value: V): void {
    this.#entries.push({ db: db as Database<unknown, Key>, key, value })
  }

  get size (): number {
    return this.#entries.length
  }

  /**
   * Issue every put. Inside a transaction callback they are part of that transaction; outside one,
   * lmdb-js puts issued in one event turn go into one transaction (its B-tree work on lmdb-js's
   * write thread), and the promise returned resolves once that transaction has committed.
   */
  issue (): Promise<boolean> | undefined {
    let last: Promise<boolean> | undefined
    for (const { db, key, value } of this.#entries) last = db.put(key, value)
    return last
  }
}

export type TelemetryEvent =
  | { kind: 'chunk', device: string, sequence: number, type: ChunkPayload['type'], at: number }
  | { kind: 'fault', device: string, sequence: number, pc: number, lr: number, at: number }
  | { kind: 'reboot', device: string, reason: string, at: number }
  | { kind: 'elf', build_id: string, at: number }
  | { kind: 'device.registered', device: string, at: number }
  | { kind: 'device.online', device: string, at: number }
  | { kind: 'device.offline', device: string, last_seen: number | null, at: number }

export interface ChunkMeta {
  device: string
  sequence: number
  /** Server receive time, ms since the epoch. */
  at: number
}

/** A device record for an id first seen in a chunk (auto-registration). */
export function newDevice (id: string, at: number, fields: Partial<Device> = {}): Device {
  return {
    id, name: id, group: null, serial: null, hardware_version: null, software_type: null, software_version: null,
    build_id: null, registered: false, encrypted: false, created_at: at, last_seen: null, boot_count: null, offline: false, ...fields
  }
}

export function applyChunk (store: TelemetryStore, writes: WriteBatch, known: Device | undefined, meta: ChunkMeta, payload: ChunkPayload): { device: Device, events: TelemetryEvent[] } {
  const events: TelemetryEvent[] = []
  const device = { ...(known ?? newDevice(meta.device, meta.at)) }
  if (known === undefined) events.push({ kind: 'device.registered', device: meta.device, at: meta.at })
  if (device.offline) events.push({ kind: 'device.online', device: meta.device, at: meta.at })
  device.offline = false
  device.last_seen = meta.at
  const base = { device: meta.device, sequence: meta.sequence, received_at: meta.at }
  switch (payload.type) {
    case 'DeviceInfo':
      Object.assign(device, payload.record, { build_id: payload.record.build_id === '' ? null : payload.record.build_id })
      break
    case 'RebootReason':
      device.boot_count = payload.record.boot_count
      writes.put(store.reboots, [meta.device, meta.at, meta.sequence], { ...base, ...payload.record })
      events.push({ kind: 'reboot', device: meta.device, reason: payload.record.reason, at: meta.at })
      break
    case 'FaultRecord':
      writes.put(store.faults, [meta.device, meta.at, meta.sequence], {
        ...base, ...payload.record, software_version: device.software_version, build_id: device.build_id, symbol: null
      })
      events.push({ kind: 'fault', device: meta.device, sequence: meta.sequence, pc: payload.record.pc, lr: payload.record.lr, at: meta.at })
      break
    case 'Metrics':
      payload.record.entries.forEach((entry, i) => { writes.put(store.metrics, [meta.device, meta.at, meta.sequence, i], { ...base, ...entry }) })
      break
    case 'Trace':
      writes.put(store.traces, [meta.device, meta.at, meta.sequence], {
        ...base, uptime_ms: payload.record.uptime_ms, dropped: payload.record.dropped, text: Buffer.from(payload.record.data).toString('utf8')
      })
      break
    case 'Heartbeat':
      device.boot_count = payload.record.boot_count
      break
  }
  events.push({ kind: 'chunk', device: meta.device, sequence: meta.sequence, type: payload.type, at: meta.at })
  return { device, events }
}
