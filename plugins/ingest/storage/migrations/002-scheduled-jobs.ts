// Migration 2: when each scheduled job (the offline check, retention) last ran, so that of the nodes
// sharing the database one runs it per period.
export const scheduledJobs = `
CREATE TABLE scheduled_jobs (
  name text PRIMARY KEY,
  at bigint NOT NULL
);
`
