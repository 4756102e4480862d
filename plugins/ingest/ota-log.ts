// A device's OTA events for its timeline: the update offers it was given and the image downloads it
// made (the bytes served each time), the newest 100 kept in one document per device. An offer the
// device is given again at its next check, unchanged, is not written again.
import type { TelemetryStorage } from './storage/contract.js'

const KIND = 'ota-log'
/** Events kept per device. */
const KEPT = 100

export type OtaEvent =
  | { event: 'offered', at: number, release: string, version: string, image: string }
  | { event: 'download', at: number, version: string, image: string, from: number, to: number, size: number }

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
  await storage.changeDocument<OtaLog>(KIND, device, current => ({ events: [...(current?.events ?? []), event].slice(-KEPT) }))
}

/** Forget a deleted device's events. */
export async function removeOtaEvents (storage: TelemetryStorage, device: string): Promise<void> {
  await storage.changeDocument<OtaLog>(KIND, device, () => null)
}

/** One line of the timeline. */
export function otaSummary (event: OtaEvent): string {
  if (event.event === 'offered') return `OTA: offered ${event.version} (release ${event.release.slice(0, 8)})`
  const whole = event.from === 0 && event.to === event.size - 1
  return `OTA: ${whole ? 'downloaded' : event.from === 0 ? 'download started' : 'download resumed'} ${event.version}, bytes ${event.from}–${event.to} of ${event.size}`
}
