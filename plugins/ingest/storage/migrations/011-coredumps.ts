// Migration 11: each fault's coredump (the regions the device captured at the fault, bounded: coredump.ts),
// null when it sent none.
export const coredumps = `
ALTER TABLE faults ADD COLUMN coredump jsonb;
`
