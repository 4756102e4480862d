// Migration 5: crash issues (crash-issues.ts). Each fault names its issue; an issue is one jsonb
// document; its counts by device, version and hour are rows; a PC issue whose faults were symbolicated
// names the symbol issue its later faults join. read_issues takes the issues' turns (transaction-scoped
// advisory locks in the plugin's fourth key space, 0x42657277, in the order given: the caller sorts)
// and reads the rows an update touches; apply_issues writes what the update made of them.
export const crashIssues = `
ALTER TABLE faults ADD COLUMN issue text;
CREATE INDEX faults_issue ON faults (issue, received_at DESC, device, sequence) WHERE issue IS NOT NULL;
CREATE INDEX faults_ungrouped ON faults (device, received_at, sequence) WHERE issue IS NULL;

CREATE TABLE crash_issues (
  id text PRIMARY KEY,
  issue jsonb NOT NULL
);

CREATE TABLE crash_issue_members (
  issue text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL,
  member text COLLATE "C" NOT NULL,
  count bigint NOT NULL,
  last_seen bigint NOT NULL,
  PRIMARY KEY (issue, kind, member)
);
CREATE INDEX crash_issue_members_by_member ON crash_issue_members (kind, member);

CREATE TABLE crash_issue_aliases (
  pc_issue text PRIMARY KEY,
  issue jsonb NOT NULL
);

CREATE FUNCTION read_issues(request jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  id text;
BEGIN
  FOR id IN SELECT jsonb_array_elements_text(request->'issues') LOOP
    PERFORM pg_advisory_xact_lock(1113944695, hashtext(id));
  END LOOP;
  RETURN jsonb_build_object(
    'issues', (SELECT coalesce(jsonb_agg(i.issue), '[]') FROM crash_issues i WHERE i.id IN (SELECT jsonb_array_elements_text(request->'issues'))),
    'members', (SELECT coalesce(jsonb_agg(to_jsonb(m)), '[]') FROM crash_issue_members m
      JOIN jsonb_to_recordset(request->'members') AS r (issue text, kind text, member text) ON m.issue = r.issue AND m.kind = r.kind AND m.member = r.member)
  );
END
$fn$;

CREATE FUNCTION apply_issues(request jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE faults f SET issue = u.issue FROM jsonb_to_recordset(request->'faults') AS u (device text, received_at bigint, sequence bigint, issue text)
    WHERE f.device = u.device AND f.received_at = u.received_at AND f.sequence = u.sequence;
  INSERT INTO crash_issues (id, issue) SELECT i->>'id', i FROM jsonb_array_elements(request->'put') AS i
    ON CONFLICT (id) DO UPDATE SET issue = excluded.issue;
  DELETE FROM crash_issues WHERE id IN (SELECT jsonb_array_elements_text(request->'removed'));
  INSERT INTO crash_issue_members SELECT * FROM jsonb_to_recordset(request->'members') AS m (issue text, kind text, member text, count bigint, last_seen bigint)
    ON CONFLICT (issue, kind, member) DO UPDATE SET count = excluded.count, last_seen = excluded.last_seen;
  DELETE FROM crash_issue_members m USING jsonb_to_recordset(request->'removed_members') AS r (issue text, kind text, member text)
    WHERE m.issue = r.issue AND m.kind = r.kind AND m.member = r.member;
  INSERT INTO crash_issue_aliases (pc_issue, issue) SELECT a->>'pc', a->'issue' FROM jsonb_array_elements(request->'aliases') AS a
    ON CONFLICT (pc_issue) DO NOTHING;
END
$fn$;
`
