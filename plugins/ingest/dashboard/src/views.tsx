// The dashboard's views: the fleet overview, the devices list (search, filters, a sort, a metric
// column, pages), one device (a metric chart over a chosen range, its firmware slots, its timeline, reboots, faults with
// their symbols, trace lines) and the groups
// (created by provisioners and admins only: the form is not shown to viewers, and the API refuses them too).
import { useEffect, useState } from 'preact/hooks'
import { useData, when } from './data.js'
import { FaultCoredump, FaultWhere, type BacktraceFrame, type CoredumpSummary } from './faults.js'
import { Pages, useCursorPages } from './pages.js'
import { api, type Me } from './api.js'
import { Chart, type Points } from './chart.js'
import { AlertHistory, SymbolFiles, Timeline } from './operations.js'
import { FirmwareSlots } from './slots.js'

interface Device {
  id: string
  name: string
  group: string | null
  serial: string | null
  software_type: string | null
  software_version: string | null
  last_seen: number | null
  offline: boolean
  boot_count: number | null
}
interface Overview {
  devices: { total: number, online: number, offline: number, never_seen: number }
  faults_24h: number
  top_functions: Array<{ function: string, faults: number }>
  software_versions: Array<{ software_type: string | null, software_version: string | null, devices: number }>
}
interface Page<T> { items: T[], next_cursor: string | null }
interface Fault { device: string, sequence: number, received_at: number, pc: number, symbol: string | null, backtrace: BacktraceFrame[], coredump?: CoredumpSummary }
interface Reboot { sequence: number, received_at: number, reason: string, boot_count: number }
interface Trace { sequence: number, received_at: number, text: string }
interface Metric { key: string }
interface Group { name: string, description: string }

const stateOf = (d: Device): string => d.last_seen === null ? 'never seen' : d.offline ? 'offline' : 'online'

export function OverviewView ({ version }: { version: number }) {
  const { data, error } = useData(async () => await api<Overview>('GET', '/fleet/overview'), [version])
  if (error !== undefined) return <p class="error">{error}</p>
  if (data === undefined) return <p>Loading…</p>
  return (
    <section>
      <div class="cards">
        <div class="card" data-testid="online"><b>{data.devices.online}</b> online</div>
        <div class="card"><b>{data.devices.offline}</b> offline</div>
        <div class="card"><b>{data.devices.never_seen}</b> never seen</div>
        <div class="card"><b>{data.faults_24h}</b> faults in 24 h</div>
      </div>
      <h2>Top crashing functions (24 h)</h2>
      <table><tbody>{data.top_functions.map(f => <tr key={f.function}><td>{f.function}</td><td>{f.faults}</td></tr>)}</tbody></table>
      <h2>Firmware versions</h2>
      <table><tbody>{data.software_versions.map(v => <tr key={`${v.software_type ?? ''}@${v.software_version ?? ''}`}><td>{v.software_type ?? '—'} {v.software_version ?? 'unknown'}</td><td>{v.devices}</td></tr>)}</tbody></table>
    </section>
  )
}

export function DevicesView ({ version }: { version: number }) {
  const [q, setQ] = useState('')
  const [state, setState] = useState('')
  const [group, setGroup] = useState('')
  const [firmware, setFirmware] = useState('')
  const [sort, setSort] = useState('')
  const [metric, setMetric] = useState('')
  const groups = useData(async () => await api<{ groups: Group[] }>('GET', '/groups'), [])
  const pages = useCursorPages()
  const { cursor } = pages
  const query = new URLSearchParams({
    limit: '50', ...(q !== '' && { q }), ...(state !== '' && { state }), ...(group !== '' && { group }), ...(firmware !== '' && { software_version: firmware }), ...(cursor !== '' && { cursor }),
    ...(sort !== '' && { sort: sort === 'metric' && metric === '' ? 'last_seen' : sort }), ...(metric !== '' && { metric })
  })
  const { data, error } = useData(async () => await api<{ devices: Array<Device & { fault_count?: number, metric_value?: number | null }>, next_cursor: string | null }>('GET', `/devices?${query.toString()}`), [version, query.toString()])
  return (
    <section>
      <div class="filters">
        <input placeholder="Search id, name, serial" value={q} onInput={e => { setQ(e.currentTarget.value); pages.restart() }} />
        <select value={state} onChange={e => { setState(e.currentTarget.value); pages.restart() }}>
          <option value="">any state</option><option value="online">online</option><option value="offline">offline</option><option value="never_seen">never seen</option>
        </select>
        <select name="group" value={group} onChange={e => { setGroup(e.currentTarget.value); pages.restart() }}>
          <option value="">any group</option>{(groups.data?.groups ?? []).map(g => <option key={g.name} value={g.name}>{g.name}</option>)}
        </select>
        <input name="firmware" placeholder="Firmware version" value={firmware} onInput={e => { setFirmware(e.currentTarget.value); pages.restart() }} />
        <select name="sort" value={sort} onChange={e => { setSort(e.currentTarget.value); pages.restart() }}>
          <option value="">by id</option><option value="last_seen">last seen</option><option value="fault_count">most faults</option><option value="software_version">firmware</option><option value="metric">the metric column</option>
        </select>
        <input name="metric" placeholder="Metric column, e.g. battery_mv" value={metric} onInput={e => { setMetric(e.currentTarget.value); pages.restart() }} />
      </div>
      {error !== undefined && <p class="error">{error}</p>}
      <table class="devices">
        <thead><tr><th>Device</th><th>Name</th><th>Group</th><th>Firmware</th><th>State</th><th>Last seen</th>{sort !== '' && <th>Faults</th>}{metric !== '' && <th>{metric}</th>}</tr></thead>
        <tbody>{(data?.devices ?? []).map(d => (
          <tr key={d.id}><td><a href={`#/devices/${d.id}`}>{d.id}</a></td><td>{d.name}</td><td>{d.group ?? ''}</td><td>{d.software_version ?? ''}</td><td>{stateOf(d)}</td><td>{when(d.last_seen)}</td>
            {sort !== '' && <td class="fault-count">{d.fault_count ?? 0}</td>}{metric !== '' && <td class="metric-value">{d.metric_value ?? ''}</td>}</tr>
        ))}</tbody>
      </table>
      <Pages pages={pages} next={data?.next_cursor} />
    </section>
  )
}

const HOUR = 3_600_000
/** The ranges a device's chart shows, ending now; 24 h unless another is chosen. */
const RANGES = [{ label: '1 h', ms: HOUR }, { label: '24 h', ms: 24 * HOUR }, { label: '7 d', ms: 7 * 24 * HOUR }, { label: '30 d', ms: 30 * 24 * HOUR }]

export function DeviceView ({ id, version }: { id: string, version: number }) {
  const device = useData(async () => await api<Device>('GET', `/devices/${id}`), [id, version])
  const faults = useData(async () => await api<Page<Fault>>('GET', `/devices/${id}/faults?limit=20`), [id, version])
  const reboots = useData(async () => await api<Page<Reboot>>('GET', `/devices/${id}/reboots?limit=20`), [id, version])
  const traces = useData(async () => await api<Page<Trace>>('GET', `/devices/${id}/traces?limit=20`), [id, version])
  // The metric names are read once per device, not on every live event.
  const keys = useData(async () => [...new Set((await api<Page<Metric>>('GET', `/devices/${id}/metrics?limit=1000`)).items.map(m => m.key))], [id])
  const [key, setKey] = useState<string | undefined>(undefined)
  const [range, setRange] = useState(24 * HOUR)
  const shown = key ?? keys.data?.[0]
  const points = useData(async () => {
    if (shown === undefined) return undefined
    const to = Date.now()
    const query = new URLSearchParams({ key: shown, from: String(to - range), to: String(to), points: '200' })
    return await api<Points>('GET', `/devices/${id}/metrics/points?${query.toString()}`)
  }, [id, shown, range, version])
  if (device.error !== undefined) return <p class="error">{device.error}</p>
  const d = device.data
  if (d === undefined) return <p>Loading…</p>
  return (
    <section>
      <h2>{d.name} <small>{d.id}</small></h2>
      <p>{stateOf(d)} · last seen {when(d.last_seen)} · firmware {d.software_type ?? ''} {d.software_version ?? 'unknown'} · group {d.group ?? 'none'} · boots {d.boot_count ?? '?'}</p>
      <h3>Metrics</h3>
      <div class="filters">
        <select name="metric" value={shown} onChange={e => { setKey(e.currentTarget.value) }}>{(keys.data ?? []).map(k => <option key={k}>{k}</option>)}</select>
        <select name="range" value={range} onChange={e => { setRange(Number(e.currentTarget.value)) }}>{RANGES.map(r => <option key={r.ms} value={r.ms}>last {r.label}</option>)}</select>
      </div>
      {keys.data?.length === 0 && <p>No metrics yet.</p>}
      {points.data !== undefined && <Chart data={points.data} />}
      {points.data?.points.length === 0 && <p class="empty">No samples of {shown} in this range.</p>}
      <h3>Firmware slots</h3>
      <FirmwareSlots id={id} version={version} />
      <h3>Timeline</h3>
      <Timeline id={id} version={version} />
      <h3>Faults</h3>
      <table class="faults"><tbody>{(faults.data?.items ?? []).map(f => <tr key={f.sequence}><td>{when(f.received_at)}</td><td>0x{f.pc.toString(16)}</td><td><FaultWhere symbol={f.symbol} backtrace={f.backtrace} /><FaultCoredump fault={f} /></td></tr>)}</tbody></table>
      <h3>Reboots</h3>
      <table><tbody>{(reboots.data?.items ?? []).map(r => <tr key={r.sequence}><td>{when(r.received_at)}</td><td>{r.reason}</td><td>boot {r.boot_count}</td></tr>)}</tbody></table>
      <h3>Trace and log lines</h3>
      <pre class="traces">{(traces.data?.items ?? []).map(t => t.text).join('')}</pre>
    </section>
  )
}

export function GroupsView ({ me, version }: { me: Me, version: number }) {
  const [changed, setChanged] = useState(0)
  const [name, setName] = useState('')
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const { data } = useData(async () => await api<{ groups: Group[] }>('GET', '/groups'), [version, changed])
  const create = async (): Promise<void> => {
    try {
      await api('POST', '/groups', { name })
      setName('')
      setFailure(undefined)
      setChanged(changed + 1)
    } catch (err) {
      setFailure((err as Error).message)
    }
  }
  return (
    <section>
      <table class="groups"><tbody>{(data?.groups ?? []).map(g => (
        <tr key={g.name}><td>{g.name}</td>
          <td>{me.role === 'viewer'
            ? g.description
            : <EditField label="description" value={g.description} save={async description => { await api('PUT', `/groups/${encodeURIComponent(g.name)}`, { description }); setChanged(changed + 1) }} />}</td></tr>
      ))}</tbody></table>
      {me.role !== 'viewer' && (
        <form class="new-group" onSubmit={e => { e.preventDefault(); void create() }}>
          <input placeholder="group name" value={name} onInput={e => { setName(e.currentTarget.value) }} />
          <button type="submit">New group</button>
        </form>
      )}
      {failure !== undefined && <p class="error">{failure}</p>}
    </section>
  )
}

/** A value edited in place: an input and a Save button; the server's refusal is shown beside it. */
function EditField ({ label, value, save }: { label: string, value: string, save: (value: string) => Promise<void> }) {
  const [text, setText] = useState(value)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  useEffect(() => { setText(value) }, [value])
  return (
    <form class="edit" onSubmit={e => { e.preventDefault(); save(text).then(() => { setFailure(undefined) }, (err: Error) => { setFailure(err.message) }) }}>
      <input name={label} value={text} onInput={e => { setText(e.currentTarget.value) }} />
      <button type="submit" disabled={text === value}>Save</button>
      {failure !== undefined && <span class="error">{failure}</span>}
    </form>
  )
}

interface OtaTarget { id: string, software_type: string, version: string, group: string | null, url: string | null }

/** A form's submit: calls `send`, shows its failure, and bumps `changed` when it worked. */
function useSubmit (send: () => Promise<unknown>, changed: () => void): { submit: (e: Event) => void, failure?: string } {
  const [failure, setFailure] = useState<string | undefined>(undefined)
  return {
    failure,
    submit: e => {
      e.preventDefault()
      send().then(() => { setFailure(undefined); changed() }, (err: Error) => { setFailure(err.message) })
    }
  }
}

export function OtaView ({ me, version }: { me: Me, version: number }) {
  const [changed, setChanged] = useState(0)
  const [type, setType] = useState('main')
  const [release, setRelease] = useState('')
  const [group, setGroup] = useState('')
  const { data } = useData(async () => await api<{ targets: OtaTarget[] }>('GET', '/ota/targets'), [version, changed])
  const form = useSubmit(async () => await api('POST', '/ota/targets', { software_type: type, version: release, group: group === '' ? null : group }), () => { setRelease(''); setChanged(changed + 1) })
  return (
    <section>
      <table class="ota"><thead><tr><th>Software</th><th>Version</th><th>Group</th><th /></tr></thead><tbody>{(data?.targets ?? []).map(o => (
        <tr key={o.id}><td>{o.software_type}</td>
          <td>{me.role === 'viewer'
            ? o.version
            : <EditField label="version" value={o.version} save={async version => {
              await api('PUT', `/ota/targets/${encodeURIComponent(o.id)}`, { software_type: o.software_type, version, group: o.group, ...(o.url !== null && { url: o.url }) })
              setChanged(changed + 1)
            }} />}</td>
          <td>{o.group ?? 'all'}</td>
          <td>{me.role === 'admin' && <button onClick={() => { api('DELETE', `/ota/targets/${encodeURIComponent(o.id)}`).then(() => { setChanged(changed + 1) }, () => {}) }}>Delete</button>}</td></tr>
      ))}</tbody></table>
      {me.role !== 'viewer' && (
        <form class="new-ota" onSubmit={form.submit}>
          <input name="software_type" placeholder="software type" value={type} onInput={e => { setType(e.currentTarget.value) }} />
          <input name="version" placeholder="version" value={release} onInput={e => { setRelease(e.currentTarget.value) }} />
          <input name="group" placeholder="group (empty: all)" value={group} onInput={e => { setGroup(e.currentTarget.value) }} />
          <button type="submit">New OTA target</button>
        </form>
      )}
      {form.failure !== undefined && <p class="error">{form.failure}</p>}
    </section>
  )
}

export function FirmwareView ({ me }: { me: Me }) {
  const [result, setResult] = useState<string | undefined>(undefined)
  const [type, setType] = useState('main')
  const [release, setRelease] = useState('')
  const upload = useSubmit(async () => {
    const input = document.querySelector<HTMLInputElement>('input[type="file"]')
    const file = input?.files?.[0]
    if (file === undefined) throw new Error('choose an ELF file first')
    const query = new URLSearchParams({ software_type: type, ...(release !== '' && { software_version: release }) })
    const answer = await api<{ build_id: string, size: number }>('POST', `/ingest/elf?${query.toString()}`, new Uint8Array(await file.arrayBuffer()))
    setResult(`uploaded: build ${answer.build_id}, ${answer.size} bytes; faults of this build are resolved with it`)
  }, () => {})
  if (me.role === 'viewer') return <section><p>Uploading firmware images (ELF files, for fault symbolication) needs the provisioner role.</p><SymbolFiles version={0} /></section>
  return (
    <section>
      <form class="elf" onSubmit={upload.submit}>
        <input type="file" accept=".elf,application/octet-stream" />
        <input name="software_type" placeholder="software type" value={type} onInput={e => { setType(e.currentTarget.value) }} />
        <input name="software_version" placeholder="version" value={release} onInput={e => { setRelease(e.currentTarget.value) }} />
        <button type="submit">Upload ELF</button>
      </form>
      {result !== undefined && upload.failure === undefined && <p class="result">{result}</p>}
      {upload.failure !== undefined && <p class="error">{upload.failure}</p>}
      <SymbolFiles version={result === undefined ? 0 : 1} />
    </section>
  )
}

export function AlertsView ({ version }: { version: number }) {
  const { data } = useData(async () => await api<{ devices: Device[] }>('GET', '/devices?state=offline&limit=100'), [version])
  return (
    <section>
      <h2>Offline devices</h2>
      <p>A device is marked offline, and an alert raised, when it has sent nothing for [ingest].offline_after_seconds; it is online again with its next chunk.</p>
      <table class="alerts"><tbody>{(data?.devices ?? []).map(d => <tr key={d.id}><td><a href={`#/devices/${d.id}`}>{d.id}</a></td><td>{d.name}</td><td>last seen {when(d.last_seen)}</td></tr>)}</tbody></table>
      <AlertHistory version={version} />
    </section>
  )
}
