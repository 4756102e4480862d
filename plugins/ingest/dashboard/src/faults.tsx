// Where a fault happened, as the fault lists show it: its symbol, and its backtrace when unwinding
// found more than the one frame.

export interface BacktraceFrame { address: number, symbol: string }

export function FaultWhere ({ symbol, backtrace }: { symbol: string | null, backtrace?: BacktraceFrame[] }) {
  return (
    <div>
      {symbol ?? 'not symbolicated yet'}
      {backtrace !== undefined && backtrace.length > 1 && (
        <ol class="backtrace" start={0}>{backtrace.map((frame, i) => <li key={i}><code>0x{frame.address.toString(16).padStart(8, '0')}</code> {frame.symbol}</li>)}</ol>
      )}
    </div>
  )
}
