// The fleet at a glance, for the dashboard's first view: devices online and offline, faults of the
// last 24 hours and the functions they happened in, and the firmware versions running. Computed by
// reading the devices and faults, and kept for OVERVIEW_MS so a page refresh storm reads them once.
import { codeAddress } from './crash-issues.js'
import type { TelemetryStorage } from './storage/contract.js'

const DAY_MS = 86_400_000
export const OVERVIEW_MS = 5000
const TOP = 10

export interface FleetOverview {
  at: string
  devices: { total: number, online: number, offline: number, never_seen: number }
  faults_24h: number
  /** Where the last day's faults happened: the symbol's function, or `unsymbolicated` with the PC. */
  top_functions: Array<{ function: string, faults: number }>
  software_versions: Array<{ software_type: string | null, software_version: string | null, devices: number }>
}

function functionOf (symbol: string | null, pc: number): string {
  if (symbol === null || symbol.startsWith('unsymbolicated')) return `unsymbolicated ${codeAddress(pc)}`
  return symbol.split(' at ')[0]
}

export async function fleetOverview (storage: TelemetryStorage, now = Date.now()): Promise<FleetOverview> {
  const devices = { total: 0, online: 0, offline: 0, never_seen: 0 }
  const versions = new Map<string, { software_type: string | null, software_version: string | null, devices: number }>()
  for await (const d of storage.devices()) {
    devices.total++
    if (d.last_seen === null) devices.never_seen++
    else if (d.offline) devices.offline++
    else devices.online++
    const key = `${d.software_type ?? ''}\0${d.software_version ?? ''}`
    const entry = versions.get(key) ?? { software_type: d.software_type, software_version: d.software_version, devices: 0 }
    entry.devices++
    versions.set(key, entry)
  }
  let faults = 0
  const functions = new Map<string, number>()
  for await (const f of storage.faultsSince(now - DAY_MS)) {
    faults++
    const name = functionOf(f.symbol, f.pc)
    functions.set(name, (functions.get(name) ?? 0) + 1)
  }
  return {
    at: new Date(now).toISOString(),
    devices,
    faults_24h: faults,
    top_functions: [...functions].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP).map(([fn, count]) => ({ function: fn, faults: count })),
    software_versions: [...versions.values()].sort((a, b) => b.devices - a.devices)
  }
}

/** fleetOverview, computed at most once per OVERVIEW_MS. */
export function cachedOverview (storage: TelemetryStorage): () => Promise<FleetOverview> {
  let kept: { value: Promise<FleetOverview>, until: number } | undefined
  return async () => {
    const now = Date.now()
    if (kept === undefined || kept.until <= now) {
      const value = fleetOverview(storage, now)
      kept = { value, until: now + OVERVIEW_MS }
      // A failed computation is not kept.
      value.catch(() => { if (kept?.value === value) kept = undefined })
    }
    return await kept.value
  }
}
