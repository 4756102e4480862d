// Migration 4: a request's reads and writes as two functions, so that a request is three round trips
// (`begin; select read_request(…)`, `select write_request($1)`, `commit`) instead of one per table.
// Each takes the request as one jsonb document, and keeps the plans of its statements. A plan kept
// from the first calls is made while the tables are empty, when reading chunk_marks or devices whole
// costs nothing: so read_request, which joins a request's keys to them, is planned with sequential
// scans, hash and merge joins off (index lookups only, whatever the tables' size then), and the rare
// statements of write_request that join them are planned at each call (EXECUTE). The inserts join nothing.
// The device turns are transaction-scoped advisory locks in the second key space of the plugin
// (0x42657275), taken in the order given (the caller sorts the ids).
export const requestFunctions = `
CREATE FUNCTION read_request(request jsonb) RETURNS jsonb LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  id text;
BEGIN
  FOR id IN SELECT jsonb_array_elements_text(request->'lock') LOOP
    PERFORM pg_advisory_xact_lock(1113944693, hashtext(id));
  END LOOP;
  RETURN jsonb_build_object(
    'devices', (SELECT coalesce(jsonb_agg(to_jsonb(d)), '[]') FROM devices d
      WHERE d.id IN (SELECT jsonb_array_elements_text(request->'devices'))),
    'keys', (SELECT coalesce(jsonb_agg(jsonb_build_array(k.device, encode(k.key, 'hex'))), '[]') FROM device_keys k
      WHERE k.device IN (SELECT jsonb_array_elements_text(request->'keys'))),
    'marks', (SELECT coalesce(jsonb_agg(jsonb_build_array(m.device, m.sequence, encode(m.digest, 'hex'), m.at) ORDER BY m.at DESC), '[]')
      FROM chunk_marks m JOIN jsonb_to_recordset(request->'pairs') AS w (d text, s bigint) ON m.device = w.d AND m.sequence = w.s)
  );
END
$fn$;

CREATE FUNCTION write_request(request jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO reboots (device, sequence, received_at, reason, boot_count, pc, lr)
    SELECT * FROM jsonb_to_recordset(request->'reboots')
      AS r (device text, sequence bigint, received_at bigint, reason text, boot_count bigint, pc bigint, lr bigint);
  INSERT INTO faults (device, sequence, received_at, pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar, uptime_ms, software_version, build_id, symbol)
    SELECT * FROM jsonb_to_recordset(request->'faults')
      AS f (device text, sequence bigint, received_at bigint, pc bigint, lr bigint, sp bigint, psr bigint, cfsr bigint, hfsr bigint,
            mmfar bigint, bfar bigint, uptime_ms bigint, software_version text, build_id text, symbol text);
  INSERT INTO traces (device, sequence, received_at, uptime_ms, dropped, text)
    SELECT * FROM jsonb_to_recordset(request->'traces')
      AS t (device text, sequence bigint, received_at bigint, uptime_ms bigint, dropped bigint, text text);
  INSERT INTO metrics (device, sequence, received_at, entry, key, kind, value, uptime_ms)
    SELECT * FROM jsonb_to_recordset(request->'metrics')
      AS m (device text, sequence bigint, received_at bigint, entry integer, key text, kind text, value double precision, uptime_ms bigint);
  -- A digest stored before under its (device, sequence) has its time moved on; a sequence keeps its newest digests only.
  IF request ? 'moved' THEN
    EXECUTE 'UPDATE chunk_marks m SET at = u.at FROM jsonb_to_recordset($1->''moved'') AS u (device text, sequence bigint, digest text, at bigint)
      WHERE m.device = u.device AND m.sequence = u.sequence AND m.digest = decode(u.digest, ''hex'')' USING request;
  END IF;
  IF request ? 'trims' THEN
    EXECUTE 'DELETE FROM chunk_marks m USING jsonb_to_recordset($1->''trims'') AS t (device text, sequence bigint, kept text[])
      WHERE m.device = t.device AND m.sequence = t.sequence AND NOT (encode(m.digest, ''hex'') = ANY (t.kept))' USING request;
  END IF;
  -- A content new to its (device, sequence) is inserted, never upserted: stored by another transaction at once, the primary key refuses it.
  INSERT INTO chunk_marks (device, sequence, digest, at)
    SELECT n.device, n.sequence, decode(n.digest, 'hex'), n.at FROM jsonb_to_recordset(request->'marks') AS n (device text, sequence bigint, digest text, at bigint);
  INSERT INTO devices SELECT * FROM jsonb_populate_recordset(NULL::devices, request->'devices')
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, "group" = excluded."group", serial = excluded.serial,
      hardware_version = excluded.hardware_version, software_type = excluded.software_type, software_version = excluded.software_version,
      build_id = excluded.build_id, registered = excluded.registered, encrypted = excluded.encrypted, created_at = excluded.created_at,
      last_seen = excluded.last_seen, boot_count = excluded.boot_count, offline = excluded.offline;
END
$fn$;
`
