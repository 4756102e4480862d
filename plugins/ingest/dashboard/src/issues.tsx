// The crash issues views: the fleet's issues (status, version and text filters, a sort, pages) and one
// issue (its counts and status, set by provisioners and admins, its occurrences by hour as bars, the
// versions and devices it hit, and its latest faults with the status registers in words).
import { useState } from 'preact/hooks'
import { api, type Me } from './api.js'
import { useData, when } from './data.js'
import { FaultCoredump, FaultWhere, type BacktraceFrame, type CoredumpSummary } from './faults.js'
import { Pages, useCursorPages } from './pages.js'

interface Issue {
  id: string
  title: string
  grouping: 'symbol' | 'pc'
  count: number
  device_count: number
  first_seen: number
  last_seen: number
  latest_version: string | null
  status: 'open' | 'resolved' | 'ignored'
  resolved_version: string | null
  regression: boolean
}
interface IssueFault { device: string, sequence: number, received_at: number, pc: number, symbol: string | null, backtrace: BacktraceFrame[], coredump?: CoredumpSummary, software_version: string | null, decoded: { summary: string[], address: { register: string, value: number } | null } }
interface IssuePage {
  issue: Issue
  versions: Array<{ version: string, count: number }>
  devices: Array<{ device: string, count: number, last_seen: number }>
  occurrences: Array<{ hour: number, count: number }>
  faults: IssueFault[]
}

const hex = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, '0')}`
const statusOf = (i: Issue): string => i.regression && i.status === 'open' ? 'regressed' : i.status

export function IssuesView ({ version }: { version: number }) {
  const [status, setStatus] = useState('open')
  const [firmware, setFirmware] = useState('')
  const [q, setQ] = useState('')
  const [sort, setSort] = useState('last_seen')
  const pages = useCursorPages()
  const { cursor } = pages
  const query = new URLSearchParams({
    limit: '50', sort, ...(status !== '' && { status }), ...(firmware !== '' && { software_version: firmware }), ...(q !== '' && { q }), ...(cursor !== '' && { cursor })
  })
  const { data, error } = useData(async () => await api<{ issues: Issue[], next_cursor: string | null }>('GET', `/issues?${query.toString()}`), [version, query.toString()])
  const restart = <T,>(set: (value: T) => void) => (value: T) => { set(value); pages.restart() }
  return (
    <section>
      <h2>Crash issues</h2>
      <div class="filters">
        <select name="status" value={status} onChange={e => { restart(setStatus)(e.currentTarget.value) }}>
          <option value="">any status</option><option value="open">open</option><option value="resolved">resolved</option><option value="ignored">ignored</option>
        </select>
        <input name="firmware" placeholder="Firmware version" value={firmware} onInput={e => { restart(setFirmware)(e.currentTarget.value) }} />
        <input name="q" placeholder="Search titles" value={q} onInput={e => { restart(setQ)(e.currentTarget.value) }} />
        <select name="sort" value={sort} onChange={e => { restart(setSort)(e.currentTarget.value) }}>
          <option value="last_seen">last seen</option><option value="count">most faults</option><option value="device_count">most devices</option><option value="first_seen">newest</option>
        </select>
      </div>
      {error !== undefined && <p class="error">{error}</p>}
      <table class="issues">
        <thead><tr><th>Issue</th><th>Status</th><th>Faults</th><th>Devices</th><th>Latest version</th><th>First seen</th><th>Last seen</th></tr></thead>
        <tbody>{(data?.issues ?? []).map(i => (
          <tr key={i.id} data-issue={i.id}>
            <td><a href={`#/issues/${i.id}`}>{i.title}</a></td><td class={`status ${statusOf(i)}`}>{statusOf(i)}</td><td>{i.count}</td><td>{i.device_count}</td>
            <td>{i.latest_version ?? ''}</td><td>{when(i.first_seen)}</td><td>{when(i.last_seen)}</td>
          </tr>
        ))}</tbody>
      </table>
      <Pages pages={pages} next={data?.next_cursor} />
    </section>
  )
}

/** Occurrences by hour as bars (an SVG), the tallest hour at full height. */
function HourBars ({ hours }: { hours: IssuePage['occurrences'] }) {
  const top = Math.max(1, ...hours.map(h => h.count))
  const width = 720
  const step = width / Math.max(1, hours.length)
  return (
    <svg class="bars" data-testid="issue-chart" data-hours={hours.length} data-total={hours.reduce((sum, h) => sum + h.count, 0)} viewBox={`0 0 ${width} 100`} width={width} height={100} role="img" aria-label="faults per hour">
      {hours.map((h, i) => h.count === 0 ? null : <rect key={h.hour} x={i * step} y={100 - (h.count / top) * 100} width={Math.max(1, step - 0.5)} height={(h.count / top) * 100}><title>{`${new Date(h.hour).toLocaleString()}: ${h.count}`}</title></rect>)}
    </svg>
  )
}

export function IssueView ({ id, me, version }: { id: string, me: Me, version: number }) {
  const [changed, setChanged] = useState(0)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const { data, error } = useData(async () => await api<IssuePage>('GET', `/issues/${id}`), [id, version, changed])
  if (error !== undefined) return <p class="error">{error}</p>
  if (data === undefined) return <p>Loading…</p>
  const { issue } = data
  const set = (status: Issue['status']): void => {
    api('PATCH', `/issues/${id}`, { status }).then(() => { setFailure(undefined); setChanged(c => c + 1) }, (err: Error) => { setFailure(err.message) })
  }
  return (
    <section>
      <h2 data-testid="issue-title">{issue.title}</h2>
      <div class="cards">
        <div class="card"><b data-testid="issue-status">{statusOf(issue)}</b> status</div>
        <div class="card"><b data-testid="issue-count">{issue.count}</b> faults</div>
        <div class="card"><b>{issue.device_count}</b> devices</div>
        <div class="card"><b>{issue.latest_version ?? '—'}</b> latest version</div>
      </div>
      <p>First seen {when(issue.first_seen)}, last seen {when(issue.last_seen)}{issue.resolved_version !== null ? `; resolved in ${issue.resolved_version}` : ''}.</p>
      {me.role !== 'viewer' && (
        <div class="filters" data-testid="issue-actions">
          {(['open', 'resolved', 'ignored'] as const).filter(s => s !== issue.status).map(s => <button key={s} onClick={() => { set(s) }}>{s === 'open' ? 'Reopen' : s === 'resolved' ? 'Resolve' : 'Ignore'}</button>)}
        </div>
      )}
      {failure !== undefined && <p class="error">{failure}</p>}
      <h3>Faults per hour (7 days)</h3>
      <HourBars hours={data.occurrences} />
      <h3>Versions</h3>
      <table data-testid="issue-versions"><tbody>{data.versions.map(v => <tr key={v.version}><td>{v.version}</td><td>{v.count}</td></tr>)}</tbody></table>
      <h3>Devices</h3>
      <table data-testid="issue-devices"><tbody>{data.devices.map(d => <tr key={d.device}><td><a href={`#/devices/${d.device}`}>{d.device}</a></td><td>{d.count}</td><td>{when(d.last_seen)}</td></tr>)}</tbody></table>
      <h3>Latest faults</h3>
      <table data-testid="issue-faults">
        <thead><tr><th>Received</th><th>Device</th><th>Version</th><th>PC</th><th>Where</th><th>Why</th></tr></thead>
        <tbody>{data.faults.map(f => (
          <tr key={`${f.device}/${f.sequence}`}>
            <td>{when(f.received_at)}</td><td>{f.device}</td><td>{f.software_version ?? ''}</td><td>{hex(f.pc)}</td><td><FaultWhere symbol={f.symbol} backtrace={f.backtrace} /><FaultCoredump fault={f} /></td>
            <td>{f.decoded.summary.map(line => <div key={line}>{line}</div>)}{f.decoded.address !== null && <div>{f.decoded.address.register} {hex(f.decoded.address.value)}</div>}</td>
          </tr>
        ))}</tbody>
      </table>
    </section>
  )
}
