// Migration 8: heartbeats kept as a series (a device's timeline shows them), written in the request's
// one round trip: write_chunks is write_request followed by the request's heartbeats.
export const heartbeats = `
CREATE TABLE heartbeats (
  device text COLLATE "C" NOT NULL,
  received_at bigint NOT NULL,
  sequence bigint NOT NULL,
  uptime_ms bigint NOT NULL,
  boot_count bigint NOT NULL,
  PRIMARY KEY (device, received_at, sequence)
);
CREATE INDEX heartbeats_received ON heartbeats (received_at);

CREATE FUNCTION write_chunks(request jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM write_request(request);
  INSERT INTO heartbeats (device, sequence, received_at, uptime_ms, boot_count)
    SELECT * FROM jsonb_to_recordset(request->'heartbeats') AS h (device text, sequence bigint, received_at bigint, uptime_ms bigint, boot_count bigint);
END
$fn$;
`
