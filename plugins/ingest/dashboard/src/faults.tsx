// Where a fault happened, as the fault lists show it: its symbol, and its backtrace when unwinding
// found more than the one frame, saying when it was found by scanning the stack (the ELF had no
// call-frame information) and where the device's stack snapshot ended.

export interface BacktraceFrame { address: number, symbol: string, unwind?: 'cfi' | 'scan', truncated?: true }

export function FaultWhere ({ symbol, backtrace }: { symbol: string | null, backtrace?: BacktraceFrame[] }) {
  const scanned = backtrace?.some(frame => frame.unwind === 'scan') === true
  const truncated = backtrace?.at(-1)?.truncated === true
  return (
    <div>
      {symbol ?? 'not symbolicated yet'}
      {backtrace !== undefined && backtrace.length > 1 && (
        <ol class="backtrace" start={0}>{backtrace.map((frame, i) => <li key={i}><code>0x{frame.address.toString(16).padStart(8, '0')}</code> {frame.symbol}</li>)}</ol>
      )}
      {truncated && <p class="backtrace-note">The stack snapshot ends here: callers beyond it were not sent.</p>}
      {scanned && <p class="backtrace-note">Found by scanning the stack (the ELF has no call-frame information): a frame may be stale, a tail call missing.</p>}
    </div>
  )
}
