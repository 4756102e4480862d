// Migration 7: each fault's stack snapshot (hex of the bytes the device sent, '' when none) and the
// backtrace symbolication unwinds from it ([{address, symbol}], innermost first; [] until then).
export const backtraces = `
ALTER TABLE faults ADD COLUMN stack text NOT NULL DEFAULT '';
ALTER TABLE faults ADD COLUMN backtrace jsonb NOT NULL DEFAULT '[]';
`
