// Crash issues on PostgreSQL: in the transaction that stores or symbolicates faults, the issues it
// touches are locked and read in one call (read_issues), updated as crash-issues.ts computes, and
// written back in another (apply_issues, migrations/005-crash-issues.ts), with each fault's issue. A request's
// new faults are read with its writes (write_chunks_issues, migration 13) and written back with its commit.
import type pg from 'pg'
import {
  applyOccurrences, memberId, touched, type IssueEvent, type IssueIdentity, type IssueMember, type IssueRows, type CrashIssue, type Occurrence
} from '../crash-issues.js'
import type { StoredFault } from './contract.js'
import { jsonText } from './postgres-request.js'

type Client = pg.PoolClient

/** The symbol issues that PC issues among `pcIssues` alias to. */
export async function aliasesOf (client: Client, pcIssues: readonly string[]): Promise<Map<string, IssueIdentity>> {
  const rows = (await client.query<{ pc_issue: string, issue: IssueIdentity }>('select pc_issue, issue from crash_issue_aliases where pc_issue = any($1::text[])', [pcIssues])).rows
  return new Map(rows.map(row => [row.pc_issue, row.issue]))
}

/** read_issues' answer: the rows an update of the issues reads. */
export interface IssuesRead { issues: CrashIssue[], members: IssueMember[] }

/** The document of read_issues: the issues `occurrences` touch and their members. */
export function readIssuesRequest (occurrences: readonly Occurrence[]): { issues: string[], members: Array<{ issue: string, kind: string, member: string }> } {
  const { issues, members } = touched(occurrences)
  return { issues, members: members.map(([issue, kind, member]) => ({ issue, kind, member })) }
}

/**
 * `occurrences` applied to the rows read: the document of apply_issues (which sets each fault's issue
 * unless `inserted`: the faults were inserted carrying it; and adds `aliases`) and what the issues tell.
 */
export function issuesUpdate (read: IssuesRead, occurrences: readonly Occurrence[], aliases: ReadonlyArray<{ pc: string, issue: IssueIdentity }>, inserted: boolean): { request: unknown, events: IssueEvent[] } {
  const rows: IssueRows = {
    issues: new Map(read.issues.map(issue => [issue.id, issue])),
    members: new Map(read.members.map(member => [memberId([member.issue, member.kind, member.member]), { ...member, count: Number(member.count), last_seen: Number(member.last_seen) }]))
  }
  const update = applyOccurrences(rows, occurrences)
  const faults = inserted ? [] : occurrences.filter(o => o.sign > 0).map(({ fault }: { fault: StoredFault }) => ({ device: fault.device, received_at: fault.received_at, sequence: fault.sequence, issue: fault.issue }))
  return {
    request: {
      faults,
      put: update.put,
      removed: update.removed,
      members: update.members,
      removed_members: update.removedMembers.map(([issue, kind, member]) => ({ issue, kind, member })),
      aliases
    },
    events: update.events
  }
}

/**
 * Apply `occurrences` (their faults stored already), holding the turns of the issues they touch:
 * the issues and members updated, each fault's issue set, `aliases` added. Returns what the issues tell.
 */
export async function applyToIssues (client: Client, occurrences: readonly Occurrence[], aliases: ReadonlyArray<{ pc: string, issue: IssueIdentity }> = []): Promise<IssueEvent[]> {
  if (occurrences.length === 0) return []
  const read = (await client.query<{ rows: IssuesRead }>('select read_issues($1::jsonb) as rows', [jsonText(readIssuesRequest(occurrences))])).rows[0].rows
  const { request, events } = issuesUpdate(read, occurrences, aliases, false)
  await client.query('select apply_issues($1::jsonb)', [jsonText(request)])
  return events
}
