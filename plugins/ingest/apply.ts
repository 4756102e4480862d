// What an accepted chunk changes: the device record, and one of the time series (a fault also waits
// for symbolication, and keeps its coredump). It only computes: the writes go into the batch the ingestor commits through the
// storage (see ingestor.ts), and the events it returns are published after that commit.
import { keptCoredump } from './coredump.js'
import type { IssueEvent } from './crash-issues.js'
import type { ReleaseState } from './ota-releases.js'
import type { Device, IngestWrites, StoredFault } from './storage/contract.js'
import type { ChunkPayload } from './wire/payloads.js'

export type TelemetryEvent =
  | { kind: 'chunk', device: string, sequence: number, type: ChunkPayload['type'], at: number }
  | { kind: 'fault', device: string, sequence: number, pc: number, lr: number, at: number }
  | { kind: 'reboot', device: string, reason: string, at: number }
  | { kind: 'elf', build_id: string, at: number }
  | { kind: 'device.registered', device: string, at: number }
  | { kind: 'device.online', device: string, at: number }
  | { kind: 'device.offline', device: string, last_seen: number | null, at: number }
  | IssueEvent
  | { kind: 'ota.release', release: string, state: ReleaseState, stage: number, percent: number, reason: string | null, at: number }

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

/**
 * Apply one accepted chunk to `device` (the caller's own copy of the record, changed in place; `isNew`
 * when the chunk registers it), add its series writes to `writes` and its events to `events`.
 */
export function applyChunk (writes: IngestWrites, events: TelemetryEvent[], device: Device, isNew: boolean, meta: ChunkMeta, payload: ChunkPayload): void {
  if (isNew) events.push({ kind: 'device.registered', device: meta.device, at: meta.at })
  if (device.offline) events.push({ kind: 'device.online', device: meta.device, at: meta.at })
  device.offline = false
  device.last_seen = meta.at
  // Records are built field by field (one shape each, no spreads): this runs for every chunk.
  const { device: id, sequence, at } = meta
  switch (payload.type) {
    case 'DeviceInfo':
      Object.assign(device, payload.record, { build_id: payload.record.build_id === '' ? null : payload.record.build_id })
      break
    case 'RebootReason': {
      const r = payload.record
      device.boot_count = r.boot_count
      writes.reboots.push({ device: id, sequence, received_at: at, reason: r.reason, boot_count: r.boot_count, pc: r.pc, lr: r.lr })
      events.push({ kind: 'reboot', device: id, reason: r.reason, at })
      break
    }
    case 'FaultRecord': {
      const r = payload.record
      const fault: StoredFault = {
        device: id, sequence, received_at: at, pc: r.pc, lr: r.lr, sp: r.sp, psr: r.psr, cfsr: r.cfsr, hfsr: r.hfsr, mmfar: r.mmfar, bfar: r.bfar,
        uptime_ms: r.uptime_ms, stack: Buffer.from(r.stack ?? []).toString('hex'), software_version: device.software_version, build_id: device.build_id, symbol: null, backtrace: [], issue: null
      }
      const coredump = keptCoredump(r)
      if (coredump !== undefined) fault.coredump = coredump
      writes.faults.push(fault)
      events.push({ kind: 'fault', device: id, sequence, pc: r.pc, lr: r.lr, at })
      break
    }
    case 'Metrics': {
      const entries = payload.record.entries
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]
        writes.metrics.push({ metric: { device: id, sequence, received_at: at, key: e.key, kind: e.kind, value: e.value, uptime_ms: e.uptime_ms }, index: i })
      }
      break
    }
    case 'Trace':
      writes.traces.push({
        device: id, sequence, received_at: at, uptime_ms: payload.record.uptime_ms, dropped: payload.record.dropped, text: Buffer.from(payload.record.data).toString('utf8')
      })
      break
    case 'Heartbeat':
      device.boot_count = payload.record.boot_count
      writes.heartbeats.push({ device: id, sequence, received_at: at, uptime_ms: payload.record.uptime_ms, boot_count: payload.record.boot_count })
      break
  }
  events.push({ kind: 'chunk', device: id, sequence, type: payload.type, at })
}
