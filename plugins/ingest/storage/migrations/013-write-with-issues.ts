// Migration 13: a request's writes and the read of its faults' crash issues in one round trip:
// write_chunks_issues writes the request (write_chunks), then, given the issues' document (null when
// the request has no faults), takes their turns and reads them (read_issues).
export const writeWithIssues = `
CREATE FUNCTION write_chunks_issues(request jsonb, issues jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM write_chunks(request);
  IF issues IS NULL THEN
    RETURN NULL;
  END IF;
  RETURN read_issues(issues);
END
$fn$;
`
