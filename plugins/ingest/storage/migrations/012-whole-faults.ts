// Migration 12: a request's faults inserted whole by write_chunks, each already carrying its crash issue,
// stack snapshot and coredump, instead of inserted bare by write_request and then updated twice (the
// snapshot, then the issue, which rewrote the row and its index entries). write_request keeps the rest.
export const wholeFaults = `
CREATE OR REPLACE FUNCTION write_chunks(request jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM write_request(request - 'faults');
  INSERT INTO faults (device, sequence, received_at, pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar, uptime_ms, software_version, build_id, symbol, issue, stack, coredump)
    SELECT device, sequence, received_at, pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar, uptime_ms, software_version, build_id, symbol, issue, coalesce(stack, ''), coredump
      FROM jsonb_to_recordset(request->'faults')
      AS f (device text, sequence bigint, received_at bigint, pc bigint, lr bigint, sp bigint, psr bigint, cfsr bigint, hfsr bigint,
            mmfar bigint, bfar bigint, uptime_ms bigint, software_version text, build_id text, symbol text, issue text, stack text, coredump jsonb);
  INSERT INTO heartbeats (device, sequence, received_at, uptime_ms, boot_count)
    SELECT * FROM jsonb_to_recordset(request->'heartbeats') AS h (device text, sequence bigint, received_at bigint, uptime_ms bigint, boot_count bigint);
END
$fn$;
`
