// A device's firmware slots on its page: each slot's state, version and image as the device last
// reported them (GET /devices/{id}/slots), the download in progress, and its latest reverts and
// refusals. Nothing but a line for a device that never reported slots.
import { api } from './api.js'
import { useData, when } from './data.js'

interface Slot { slot: number, state: string, version: string | null, image: string | null }
interface Problem { event: 'revert' | 'refused', at: number, slot: number | null, version: string | null, reason?: string }
interface Slots { running_slot: number | null, slots: Slot[], download: { image: string, received: number } | null, reported_at: number | null, problems: Problem[] }

const image = (sha256: string | null): string => sha256 === null ? '-' : sha256.slice(0, 12)

export function FirmwareSlots ({ id, version }: { id: string, version: number }) {
  const { data, error } = useData(async () => await api<Slots>('GET', `/devices/${id}/slots`), [id, version])
  if (error !== undefined) return <p class="error">{error}</p>
  if (data === undefined) return null
  if (data.reported_at === null) return <p class="empty">No firmware slots reported.</p>
  return (
    <div class="firmware-slots">
      <table class="slots">
        <thead><tr><th>Slot</th><th>State</th><th>Version</th><th>Image</th></tr></thead>
        <tbody>{data.slots.map(s => (
          <tr key={s.slot} class={`slot ${s.state}`}><td>{s.slot}{s.slot === data.running_slot ? ' (running)' : ''}</td><td>{s.state}</td><td>{s.version ?? '-'}</td><td>{image(s.image)}</td></tr>
        ))}</tbody>
      </table>
      {data.download !== null && <p class="download">Downloading {image(data.download.image)}: {data.download.received} bytes so far</p>}
      {data.problems.length > 0 && (
        <ul class="slot-problems">{data.problems.map(p => (
          <li key={`${p.at}-${p.event}`} class={p.event}>{when(p.at)}: {p.version ?? 'an image'} {p.event === 'revert' ? 'reverted' : 'refused'}{p.slot !== null ? ` in slot ${p.slot}` : ''}{p.reason !== undefined ? `: ${p.reason}` : ''}</li>
        ))}</ul>
      )}
      <p class="note">Reported {when(data.reported_at)}</p>
    </div>
  )
}
