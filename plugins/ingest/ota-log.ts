// A device's OTA events for its timeline: the update offers it was given and the image downloads it
// made (the bytes served each time, and what the device kept of them), and what the device reported of
// its slots (POST /ota/status): a downloaded image verified or refused, a new version confirmed, a
// revert to the other slot. The newest 100 are kept in one document per device, beside the device's
// latest slot states. An offer the device is given again at its next check, unchanged, is not written
// again, nor a report repeating the device's last one. A download the device asks for again from a
// byte inside an earlier one tells what it kept of that one (a broken transfer, a flash write that
// failed): the earlier event says so.
import type { TelemetryStorage } from './storage/contract.js'

const KIND = 'ota-log'
/** Events kept per device. */
const KEPT = 100

export const SLOT_STATES = ['empty', 'pending', 'testing', 'confirmed', 'bad'] as const
export type SlotState = typeof SLOT_STATES[number]
export const REPORTED_EVENTS = ['revert', 'refused', 'confirmed', 'verified'] as const
export type ReportedKind = typeof REPORTED_EVENTS[number]

/** What a device reported of an image: `slot` null when the report did not name one (a download's result). */
export interface ReportedEvent { event: ReportedKind, at: number, slot: number | null, version: string | null, image: string | null, reason?: string }

export type OtaEvent =
  | { event: 'offered', at: number, release: string, version: string, image: string }
  | { event: 'download', at: number, version: string, image: string, from: number, to: number, size: number, kept_to?: number }
  | ReportedEvent

/** A device's slots as it last reported them. */
export interface DeviceSlots {
  running_slot: number
  slots: Array<{ slot: number, state: SlotState, version: string | null, image: string | null }>
  download: { image: string, received: number } | null
  reported_at: number
}

interface OtaLog {
  events: OtaEvent[]
  slots?: DeviceSlots
}

/** The device's OTA events, oldest first. */
export async function otaEvents (storage: TelemetryStorage, device: string): Promise<OtaEvent[]> {
  return (await storage.document<OtaLog>(KIND, device))?.events ?? []
}

/** The device's slots as it last reported them, or undefined. */
export async function deviceSlots (storage: TelemetryStorage, device: string): Promise<DeviceSlots | undefined> {
  return (await storage.document<OtaLog>(KIND, device))?.slots
}

/** Keep the device's latest slot states. */
export async function recordSlots (storage: TelemetryStorage, device: string, slots: DeviceSlots): Promise<void> {
  await storage.changeDocument<OtaLog>(KIND, device, current => ({ events: current?.events ?? [], slots }))
}

/** Add an event to the device's log; an offer repeating the last one is left out, and so is a report repeating the last report. Says whether it was added. */
export async function recordOtaEvent (storage: TelemetryStorage, device: string, event: OtaEvent): Promise<boolean> {
  let added = false
  await storage.changeDocument<OtaLog>(KIND, device, current => {
    const events = current?.events ?? []
    if (repeats(events, event)) return undefined
    added = true
    return { ...current, events: [...keptOf(events, event), event].slice(-KEPT) }
  })
  return added
}

/** Whether `event` says again what the log says already: the same offer as the last event, or the same report as the last report. */
function repeats (events: readonly OtaEvent[], event: OtaEvent): boolean {
  if (event.event === 'offered') {
    const last = events.at(-1)
    return last?.event === 'offered' && last.release === event.release && last.image === event.image
  }
  if (event.event === 'download') return false
  const last = events.findLast((e): e is ReportedEvent => (REPORTED_EVENTS as readonly string[]).includes(e.event))
  // A report that cannot name its image (a refused download leaves its slot empty) repeats the last of its kind.
  return last !== undefined && last.event === event.event && (last.image === event.image || event.image === null) && (last.slot === event.slot || event.slot === null || last.slot === null)
}

/** `events` with the last download of `next`'s image marked with what the device kept of it, when `next` asks again from inside it. */
function keptOf (events: readonly OtaEvent[], next: OtaEvent): OtaEvent[] {
  if (next.event !== 'download') return [...events]
  const index = events.findLastIndex(e => e.event === 'download' && e.image === next.image)
  const earlier = events[index]
  if (earlier?.event !== 'download' || next.from < earlier.from || next.from > earlier.to) return [...events]
  return events.map((e, i) => i === index ? { ...earlier, kept_to: next.from - 1 } : e)
}

/** Forget a deleted device's events. */
export async function removeOtaEvents (storage: TelemetryStorage, device: string): Promise<void> {
  await storage.changeDocument<OtaLog>(KIND, device, () => null)
}

/** One line of the timeline. */
export function otaSummary (event: OtaEvent): string {
  if (event.event === 'offered') return `OTA: offered ${event.version} (release ${event.release.slice(0, 8)})`
  if (event.event !== 'download') return reportSummary(event)
  const bytes = `bytes ${event.from}–${event.to} of ${event.size}`
  if (event.kept_to !== undefined) {
    const kept = event.kept_to < event.from ? 'none of them' : `bytes ${event.from}–${event.kept_to}`
    return `OTA: download of ${event.version} broke off: ${bytes} sent, the device kept ${kept} (it asked again from byte ${event.kept_to + 1})`
  }
  const whole = event.from === 0 && event.to === event.size - 1
  return `OTA: ${whole ? 'downloaded' : event.from === 0 ? 'download started' : 'download resumed'} ${event.version}, ${bytes}`
}

function reportSummary (event: ReportedEvent): string {
  const version = event.version ?? (event.image === null ? 'an image' : `image ${event.image.slice(0, 12)}`)
  const slot = event.slot === null ? '' : ` in slot ${event.slot}`
  const reason = event.reason === undefined ? '' : `: ${event.reason}`
  if (event.event === 'verified') return `OTA: ${version} downloaded and verified, to be tested at the next boot`
  if (event.event === 'confirmed') return `OTA: ${version} confirmed${slot}`
  if (event.event === 'refused') return `OTA: ${version} refused${slot}${reason}`
  return `OTA: ${version} reverted${slot}${reason === '' ? ': it did not confirm itself before a reset' : reason}; the other slot boots`
}
