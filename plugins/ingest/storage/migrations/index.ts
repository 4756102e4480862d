// The PostgreSQL schema's migrations, in order. Each is applied once (those pending at a start in one
// transaction) and recorded in schema_migrations; a migration once released is never edited, only followed by another.
import { schema } from './001-schema.js'
import { scheduledJobs } from './002-scheduled-jobs.js'
import { elfBytes } from './003-elf-bytes.js'
import { requestFunctions } from './004-request-functions.js'
import { crashIssues } from './005-crash-issues.js'
import { documents } from './006-documents.js'
import { backtraces } from './007-backtraces.js'
import { heartbeats } from './008-heartbeats.js'
import { metricsByTime } from './009-metrics-by-time.js'
import { issuePlans } from './010-issue-plans.js'
import { coredumps } from './011-coredumps.js'
import { wholeFaults } from './012-whole-faults.js'
import { writeWithIssues } from './013-write-with-issues.js'
import type { Migration } from '../../../../kernel/runtime-api.js'

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'schema', sql: schema },
  { version: 2, name: 'scheduled-jobs', sql: scheduledJobs },
  { version: 3, name: 'elf-bytes', sql: elfBytes },
  { version: 4, name: 'request-functions', sql: requestFunctions },
  { version: 5, name: 'crash-issues', sql: crashIssues },
  { version: 6, name: 'documents', sql: documents },
  { version: 7, name: 'backtraces', sql: backtraces },
  { version: 8, name: 'heartbeats', sql: heartbeats },
  { version: 9, name: 'metrics-by-time', sql: metricsByTime },
  { version: 10, name: 'issue-plans', sql: issuePlans },
  { version: 11, name: 'coredumps', sql: coredumps },
  { version: 12, name: 'whole-faults', sql: wholeFaults },
  { version: 13, name: 'write-with-issues', sql: writeWithIssues }
]
