// A device's OTA events for its timeline: the update offers it was given and the image downloads it
// made (the bytes served each time, and what the device kept of them), the newest 100 kept in one
// document per device. An offer the device is given again at its next check, unchanged, is not
// written again. A download the device asks for again from a byte inside an earlier one tells what
// it kept of that one (a broken transfer, a flash write that failed): the earlier event says so.
import type { TelemetryStorage } from './storage/contract.js'

const KIND = 'ota-log'
/** Events kept per device. */
const KEPT = 100

export type OtaEvent =
  | { event: 'offered', at: number, release: string, version: string, image: string }
  | { event: 'download', at: number, version: string, image: string, from: number, to: number, size: number, kept_to?: number }

interface OtaLog {
  events: OtaEvent[]
}

/** The device's OTA events, oldest first. */
export async function otaEvents (storage: TelemetryStorage, device: string): Promise<OtaEvent[]> {
  return (await storage.document<OtaLog>(KIND, device))?.events ?? []
}

/** Add an event to the device's log; an offer repeating the last one is left out. */
export async function recordOtaEvent (storage: TelemetryStorage, device: string, event: OtaEvent): Promise<void> {
  const last = (await otaEvents(storage, device)).at(-1)
  if (event.event === 'offered' && last?.event === 'offered' && last.release === event.release && last.image === event.image) return
  await storage.changeDocument<OtaLog>(KIND, device, current => ({ events: [...keptOf(current?.events ?? [], event), event].slice(-KEPT) }))
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
  const bytes = `bytes ${event.from}–${event.to} of ${event.size}`
  if (event.kept_to !== undefined) {
    const kept = event.kept_to < event.from ? 'none of them' : `bytes ${event.from}–${event.kept_to}`
    return `OTA: download of ${event.version} broke off: ${bytes} sent, the device kept ${kept} (it asked again from byte ${event.kept_to + 1})`
  }
  const whole = event.from === 0 && event.to === event.size - 1
  return `OTA: ${whole ? 'downloaded' : event.from === 0 ? 'download started' : 'download resumed'} ${event.version}, ${bytes}`
}
