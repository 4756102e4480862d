// The fleet engineer's operations views: OTA releases (images, a staged release, advance / pause /
// resume / abort for provisioners and admins), a metric across a group as min/median/max bands, the
// alert history, a device's timeline, and the symbol files with the builds that lack one.
import { useState } from 'preact/hooks'
import { api, type Me } from './api.js'
import { Chart } from './chart.js'
import { useData, when } from './data.js'
import { Pages, useCursorPages } from './pages.js'

interface Image { id: string, software_type: string, version: string, size: number, uploaded_at: number }
interface Release { id: string, version: string, software_type: string, cohort: { group: string | null, percent: number }, stages: number[], stage: number, state: string, reason: string | null, created_at: number }
interface AlertRecord { id: string, rule_name: string, kind: string, at: number, summary: string, notified: boolean }
interface TimelineEntry { at: number, kind: string, sequence: number, summary: string }
interface Symbols { files: Array<{ build_id: string, software_type: string | null, software_version: string | null, uploaded_at: number }>, missing: Array<{ software_type: string | null, software_version: string | null, build_id: string | null, devices: number }> }

const ACTIONS: Record<string, string[]> = { active: ['advance', 'pause', 'abort'], paused: ['advance', 'resume', 'abort'], halted: ['resume', 'abort'], aborted: [] }

export function ReleasesView ({ me, version }: { me: Me, version: number }) {
  const [changed, setChanged] = useState(0)
  const [image, setImage] = useState('')
  const [group, setGroup] = useState('')
  const [stages, setStages] = useState('10,50,100')
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const images = useData(async () => await api<{ images: Image[] }>('GET', '/ota/images'), [version, changed])
  const releases = useData(async () => await api<{ releases: Release[] }>('GET', '/ota/releases'), [version, changed])
  const act = (promise: Promise<unknown>): void => { promise.then(() => { setFailure(undefined); setChanged(c => c + 1) }, (err: Error) => { setFailure(err.message) }) }
  return (
    <section>
      <h2>OTA releases</h2>
      <table class="releases">
        <thead><tr><th>Version</th><th>Cohort</th><th>Stage</th><th>State</th><th>Created</th><th /></tr></thead>
        <tbody>{(releases.data?.releases ?? []).map(r => (
          <tr key={r.id} data-release={r.id}>
            <td>{r.software_type} {r.version}</td><td>{r.cohort.group ?? 'fleet'} · {r.cohort.percent}%</td>
            <td>{r.stages[r.stage]}% ({r.stage + 1} of {r.stages.length})</td>
            <td class={`state ${r.state}`}>{r.state}{r.reason !== null && <div class="reason">{r.reason}</div>}</td><td>{when(r.created_at)}</td>
            <td>{me.role !== 'viewer' && (ACTIONS[r.state] ?? []).map(a => <button key={a} onClick={() => { act(api('POST', `/ota/releases/${r.id}/${a}`)) }}>{a[0].toUpperCase() + a.slice(1)}</button>)}</td>
          </tr>
        ))}</tbody>
      </table>
      {me.role !== 'viewer' && (
        <form class="new-release" onSubmit={e => {
          e.preventDefault()
          act(api('POST', '/ota/releases', { image, ...(group !== '' && { group }), stages: stages.split(',').map(Number) }))
        }}>
          <select name="image" value={image} onChange={e => { setImage(e.currentTarget.value) }}>
            <option value="">image…</option>{(images.data?.images ?? []).map(i => <option key={i.id} value={i.id}>{i.software_type} {i.version} ({i.size} bytes)</option>)}
          </select>
          <input name="group" placeholder="group (empty: the fleet)" value={group} onInput={e => { setGroup(e.currentTarget.value) }} />
          <input name="stages" placeholder="stages, e.g. 10,50,100" value={stages} onInput={e => { setStages(e.currentTarget.value) }} />
          <button type="submit">Release</button>
        </form>
      )}
      {failure !== undefined && <p class="error">{failure}</p>}
    </section>
  )
}

export function FleetMetricsView ({ version }: { version: number }) {
  const [key, setKey] = useState('battery_mv')
  const [group, setGroup] = useState('')
  const bands = useData(async () => {
    if (key === '') return undefined
    const query = new URLSearchParams({ key, points: '200', ...(group !== '' && { group }) })
    return await api<{ from: number, to: number, bands: Array<{ t: number, min: number, median: number, max: number, devices: number }> }>('GET', `/fleet/metrics/bands?${query.toString()}`)
  }, [key, group, version])
  const data = bands.data
  return (
    <section>
      <h2>A metric across the fleet</h2>
      <div class="filters">
        <input name="key" placeholder="metric key" value={key} onInput={e => { setKey(e.currentTarget.value) }} />
        <input name="group" placeholder="group (empty: the fleet)" value={group} onInput={e => { setGroup(e.currentTarget.value) }} />
      </div>
      <p>The line is the median of the devices' averages in each interval; the band spans their minimum and maximum.</p>
      {bands.error !== undefined && <p class="error">{bands.error}</p>}
      {data !== undefined && <div data-testid="fleet-bands" data-buckets={data.bands.length}><Chart data={{ from: data.from, to: data.to, points: data.bands.map(b => ({ t: b.t, min: b.min, max: b.max, avg: b.median })) }} /></div>}
      {data?.bands.length === 0 && <p class="empty">No samples of {key} in the last day.</p>}
    </section>
  )
}

export function AlertHistory ({ version }: { version: number }) {
  const { data } = useData(async () => await api<{ alerts: AlertRecord[] }>('GET', '/alerts/history?limit=50'), [version])
  return (
    <>
      <h2>Alert history</h2>
      <table class="alert-history"><tbody>{(data?.alerts ?? []).map(a => (
        <tr key={a.id}><td>{when(a.at)}</td><td>{a.rule_name}</td><td class={`alert ${a.kind}`}>{a.kind}</td><td>{a.summary}</td><td>{a.notified ? 'notified' : 'held back (cooldown)'}</td></tr>
      ))}</tbody></table>
    </>
  )
}

/** How far back a timeline starts, in hours (0: from the first entry). */
const TIMELINE_SPANS = [[1, 'the last hour'], [24, 'the last day'], [168, 'the last week'], [0, 'all of it']] as const

export function Timeline ({ id, version }: { id: string, version: number }) {
  const [hours, setHours] = useState<number>(24)
  // Fixed when the span is chosen, so the pages of one span follow one another.
  const [from, setFrom] = useState(() => Date.now() - 24 * 3_600_000)
  const pages = useCursorPages()
  const query = new URLSearchParams({ limit: '100', from: String(from), ...(pages.cursor !== '' && { cursor: pages.cursor }) })
  const { data } = useData(async () => await api<{ entries: TimelineEntry[], next_cursor: string | null }>('GET', `/devices/${id}/timeline?${query.toString()}`), [id, version, query.toString()])
  const choose = (value: number): void => { setHours(value); setFrom(value === 0 ? 0 : Date.now() - value * 3_600_000); pages.restart() }
  return (
    <>
      <select name="timeline-span" value={String(hours)} onChange={e => { choose(Number((e.target as HTMLSelectElement).value)) }}>
        {TIMELINE_SPANS.map(([value, label]) => <option key={value} value={String(value)}>{label}</option>)}
      </select>
      <ol class="timeline">{(data?.entries ?? []).map(e => <li key={`${e.kind}/${e.sequence}/${e.at}`} class={e.kind}><time>{when(e.at)}</time> <b>{e.kind}</b> {e.summary}</li>)}</ol>
      <Pages pages={pages} next={data?.next_cursor} />
    </>
  )
}

export function SymbolFiles ({ version }: { version: number }) {
  const { data } = useData(async () => await api<Symbols>('GET', '/symbols'), [version])
  return (
    <>
      <h2>Symbol files</h2>
      <table class="symbols"><tbody>{(data?.files ?? []).map(f => <tr key={f.build_id}><td>{f.software_type ?? ''} {f.software_version ?? ''}</td><td>{f.build_id}</td><td>{when(f.uploaded_at)}</td></tr>)}</tbody></table>
      <h3>Builds in the fleet without symbols</h3>
      <table class="missing-symbols"><tbody>{(data?.missing ?? []).map(m => (
        <tr key={`${m.software_version ?? ''}/${m.build_id ?? ''}`}><td>{m.software_type ?? ''} {m.software_version ?? 'unknown'}</td><td>{m.build_id ?? 'no build id reported'}</td><td>{m.devices} devices</td></tr>
      ))}</tbody></table>
    </>
  )
}
