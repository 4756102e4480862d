// Where a fault happened, as the fault lists show it: its symbol, and its backtrace when unwinding
// found more than the one frame, saying when it was found by scanning the stack (the ELF had no
// call-frame information) and where the device's stack snapshot ended; and its coredump, when it came
// with one: opened, the named globals inside it with their values, and its regions.
import { useState } from 'preact/hooks'
import { api } from './api.js'

export interface BacktraceFrame { address: number, symbol: string, unwind?: 'cfi' | 'scan', truncated?: true }

/** What a fault list says of a fault's coredump. */
export interface CoredumpSummary { regions: number, bytes: number, truncated: number, dropped: number }

interface CoredumpGlobal { name: string, address: number, size: number, bytes: string, value?: number | string }
interface CoredumpView {
  regions: Array<{ address: number, length: number, bytes: string }>
  truncated: number
  dropped: number
  globals: CoredumpGlobal[]
  globals_unavailable?: string
}

/** Bytes of a region shown before the rest is left out. */
const SHOWN_BYTES = 64

const address = (value: number): string => `0x${value.toString(16).padStart(8, '0')}`

export function FaultWhere ({ symbol, backtrace }: { symbol: string | null, backtrace?: BacktraceFrame[] }) {
  const scanned = backtrace?.some(frame => frame.unwind === 'scan') === true
  const truncated = backtrace?.at(-1)?.truncated === true
  return (
    <div>
      {symbol ?? 'not symbolicated yet'}
      {backtrace !== undefined && backtrace.length > 1 && (
        <ol class="backtrace" start={0}>{backtrace.map((frame, i) => <li key={i}><code>{address(frame.address)}</code> {frame.symbol}</li>)}</ol>
      )}
      {truncated && <p class="backtrace-note">The stack snapshot ends here: callers beyond it were not sent.</p>}
      {scanned && <p class="backtrace-note">Found by scanning the stack (the ELF has no call-frame information): a frame may be stale, a tail call missing.</p>}
    </div>
  )
}

/** A fault's coredump: a line saying what it holds, opened into its globals and regions (read when first opened). */
export function FaultCoredump ({ fault }: { fault: { device: string, received_at: number, sequence: number, coredump?: CoredumpSummary } }) {
  const [view, setView] = useState<CoredumpView | string>()
  const { coredump } = fault
  if (coredump === undefined) return null
  const open = (): void => {
    if (view !== undefined) return
    setView('Loading…')
    api<CoredumpView>('GET', `/devices/${fault.device}/faults/${fault.received_at}/${fault.sequence}/coredump`)
      .then(setView, (err: Error) => { setView(err.message) })
  }
  const cut = [coredump.truncated > 0 ? `${coredump.truncated} bytes cut on the device` : '', coredump.dropped > 0 ? `${coredump.dropped} bytes not kept by the server` : ''].filter(s => s !== '')
  return (
    <details class="coredump" onToggle={open}>
      <summary>Coredump: {coredump.regions} regions, {coredump.bytes} bytes{cut.length > 0 ? ` (${cut.join(', ')})` : ''}</summary>
      {typeof view === 'string' && <p class="coredump-note">{view}</p>}
      {typeof view === 'object' && (
        <div>
          {view.globals_unavailable !== undefined
            ? <p class="coredump-note">No globals named: {view.globals_unavailable}.</p>
            : (
              <table class="coredump-globals">
                <thead><tr><th>Global</th><th>Address</th><th>Size</th><th>Value</th></tr></thead>
                <tbody>{view.globals.map(g => (
                  <tr key={g.name}><td><code>{g.name}</code></td><td><code>{address(g.address)}</code></td><td>{g.size}</td><td><code>{g.value !== undefined ? String(g.value) : g.bytes}</code></td></tr>
                ))}</tbody>
              </table>
              )}
          <ul class="coredump-regions">{view.regions.map(r => (
            <li key={r.address}><code>{address(r.address)}</code> {r.length} bytes: <code>{r.bytes.slice(0, 2 * SHOWN_BYTES)}{r.length > SHOWN_BYTES ? '…' : ''}</code></li>
          ))}</ul>
        </div>
      )}
    </details>
  )
}
