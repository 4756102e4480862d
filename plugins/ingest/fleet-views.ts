// Views across the fleet that read more than one record: the devices list sorted by last seen, fault
// count, firmware version or a metric's latest value (with that value as a column), and one metric
// across a group over time as min/median/max bands per bucket (each device's average in the bucket
// first, so a chatty device weighs as much as a quiet one).
import { BadRequest } from '../../kernel/index.js'
import { compareVersions } from './crash-issues.js'
import { parseLimit, parseTime, MAX_POINTS, type ListQuery } from './series-query.js'
import type { Device, TelemetryStorage } from './storage/contract.js'

export const DEVICE_SORTS = ['last_seen', 'fault_count', 'software_version', 'metric'] as const
type DeviceSort = typeof DEVICE_SORTS[number]

export interface SortedDevice extends Device {
  fault_count: number
  /** The latest value of the `metric` asked for within the last day, or null. */
  metric_value: number | null
}

const DAY_MS = 86_400_000

/** The latest value of `key` each of `devices` reported within the last day. */
async function latestValues (storage: TelemetryStorage, devices: readonly Device[], key: string, now: number): Promise<Map<string, number>> {
  const latest = new Map<string, number>()
  for (const device of devices) {
    for await (const { value } of storage.series('metrics', [device.id, now - DAY_MS], now + 1)) if (value.key === key) latest.set(device.id, value.value)
  }
  return latest
}

/**
 * One page of the devices `keep` accepts, sorted (`order` desc by default; absent values last), after
 * the device `cursor` names in that order. The order is computed anew at each page.
 */
export async function sortedDevices (storage: TelemetryStorage, query: ListQuery & { sort?: string, order?: string, metric?: string }, keep: (device: Device) => boolean, now = Date.now()): Promise<{ devices: SortedDevice[], next_cursor: string | null }> {
  const sort = query.sort as DeviceSort
  if (!DEVICE_SORTS.includes(sort)) throw new BadRequest(`sort must be one of ${DEVICE_SORTS.join(', ')}, got "${query.sort ?? ''}"`)
  const order = query.order ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw new BadRequest(`order must be asc or desc, got "${order}"`)
  const { metric } = query
  if (sort === 'metric' && (metric === undefined || metric === '')) throw new BadRequest('sort=metric needs metric (the key whose latest value sorts)')
  if (metric !== undefined && metric.length > 64) throw new BadRequest('metric must be at most 64 characters')
  const limit = parseLimit(query.limit)
  const devices: Device[] = []
  for await (const device of storage.devices()) if (keep(device)) devices.push(device)
  const counts = await storage.deviceFaultCounts()
  const values = metric !== undefined && metric !== '' && sort === 'metric' ? await latestValues(storage, devices, metric, now) : new Map<string, number>()
  const rows: SortedDevice[] = devices.map(d => ({ ...d, fault_count: counts.get(d.id) ?? 0, metric_value: values.get(d.id) ?? null }))
  const valueOf = (d: SortedDevice): number | string | null => sort === 'metric' ? d.metric_value : sort === 'fault_count' ? d.fault_count : d[sort]
  const sign = order === 'asc' ? 1 : -1
  rows.sort((a, b) => {
    const [x, y] = [valueOf(a), valueOf(b)]
    if (x === null || y === null) return x === y ? a.id.localeCompare(b.id) : x === null ? 1 : -1
    const by = typeof x === 'string' ? compareVersions(x, y as string) : x - (y as number)
    return by !== 0 ? sign * by : a.id < b.id ? -1 : 1
  })
  const start = query.cursor === undefined || query.cursor === '' ? 0 : rows.findIndex(d => d.id === query.cursor) + 1
  if (start === 0 && query.cursor !== undefined && query.cursor !== '') throw new BadRequest('cursor is not a device of this list (next_cursor of the same sorted list)')
  const page = rows.slice(start, start + limit)
  // The column's values for the page's devices, when the sort did not read them already.
  if (metric !== undefined && metric !== '' && sort !== 'metric') {
    const latest = await latestValues(storage, page, metric, now)
    for (const d of page) d.metric_value = latest.get(d.id) ?? null
  }
  return { devices: page, next_cursor: start + limit < rows.length ? page[page.length - 1].id : null }
}

export interface Band { t: number, devices: number, min: number, median: number, max: number }

/**
 * One metric across the devices of a group (or the fleet) over [from, to] in at most `points` buckets:
 * per bucket, each device's average, then the minimum, median and maximum of those averages.
 */
export async function fleetBands (storage: TelemetryStorage, query: { key?: string, group?: string, from?: string, to?: string, points?: string }, now = Date.now()): Promise<{ key: string, group: string | null, from: number, to: number, bucket_ms: number, bands: Band[] }> {
  const { key } = query
  if (key === undefined || key === '') throw new BadRequest('key is required (the metric\'s name)')
  const to = parseTime('to', query.to, now)
  const from = parseTime('from', query.from, to - DAY_MS)
  if (from > to) throw new BadRequest('from must not be after to')
  const wanted = query.points === undefined || query.points === '' ? 100 : Number(query.points)
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > MAX_POINTS) throw new BadRequest(`points must be an integer from 1 to ${MAX_POINTS}, got "${query.points ?? ''}"`)
  const group = query.group ?? null
  const bucketMs = Math.max(1, Math.ceil((to - from + 1) / wanted))
  /** By bucket start: each device's sum and count. */
  const buckets = new Map<number, Map<string, [number, number]>>()
  for await (const device of storage.devices()) {
    if (group !== null && device.group !== group) continue
    for await (const { value } of storage.series('metrics', [device.id, from], to + 1)) {
      if (value.key !== key) continue
      const start = from + Math.floor((value.received_at - from) / bucketMs) * bucketMs
      const perDevice = buckets.get(start) ?? new Map<string, [number, number]>()
      buckets.set(start, perDevice)
      const [sum, count] = perDevice.get(device.id) ?? [0, 0]
      perDevice.set(device.id, [sum + value.value, count + 1])
    }
  }
  const bands = [...buckets].sort(([a], [b]) => a - b).map(([t, perDevice]) => {
    const averages = [...perDevice.values()].map(([sum, count]) => sum / count).sort((a, b) => a - b)
    const middle = averages.length >> 1
    const median = averages.length % 2 === 1 ? averages[middle] : (averages[middle - 1] + averages[middle]) / 2
    return { t, devices: averages.length, min: averages[0], median, max: averages[averages.length - 1] }
  })
  return { key, group, from, to, bucket_ms: bucketMs, bands }
}
