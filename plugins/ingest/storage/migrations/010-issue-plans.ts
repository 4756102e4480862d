// Migration 10: apply_issues planned as read_request is (migration 4), with sequential scans, hash and
// merge joins off. Its first statement joins the request's faults to the faults table; the plan it
// kept from calls made while the table was small read the table whole on every request, a cost that
// grew with the faults stored. Planned this way it finds each fault by its primary key.
export const issuePlans = `
ALTER FUNCTION apply_issues(jsonb) SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off;
`
