// Crash issues on LMDB: the rows an update touches read and written inside the kernel store's write
// transaction (where reads see the transaction's own writes), so counts add up however many requests
// store faults at once. Called only from inside TelemetryStore.transaction callbacks.
import {
  applyOccurrences, memberId, moveOf, newOccurrences, touched, type IssueEvent, type IssueRows, type Occurrence
} from '../crash-issues.js'
import type { TelemetryStore } from '../store.js'
import type { BacktraceFrame, StoredFault } from './contract.js'

/** Apply `occurrences` to the stored issues and members; returns what the issues tell. */
export function applyToIssues (store: TelemetryStore, occurrences: readonly Occurrence[]): IssueEvent[] {
  if (occurrences.length === 0) return []
  const { issues, members } = touched(occurrences)
  const rows: IssueRows = { issues: new Map(), members: new Map() }
  for (const id of issues) {
    const issue = store.issues.get(id)
    if (issue !== undefined) rows.issues.set(id, issue)
  }
  for (const ref of members) {
    const member = store.issueMembers.get([...ref])
    if (member !== undefined) rows.members.set(memberId(ref), member)
  }
  const update = applyOccurrences(rows, occurrences)
  for (const issue of update.put) void store.issues.put(issue.id, issue)
  for (const id of update.removed) void store.issues.remove(id)
  for (const member of update.members) void store.issueMembers.put([member.issue, member.kind, member.member], member)
  for (const ref of update.removedMembers) void store.issueMembers.remove([...ref])
  for (const { fault, sign } of occurrences) {
    const key: [string, number, string, number] = [fault.issue ?? '', fault.received_at, fault.device, fault.sequence]
    if (sign > 0) void store.issueFaults.put(key, true)
  }
  return update.events
}

/** Faults being stored: each joins its issue (`fault.issue` set before the fault is put). */
export function groupNewFaults (store: TelemetryStore, faults: readonly StoredFault[]): IssueEvent[] {
  return applyToIssues(store, newOccurrences(faults, pc => store.issueAliases.get(pc)))
}

/** A fault given its final symbol: moved into its symbol's issue when that is another; returns the fault to store and the occurrences. */
export function moveToSymbolIssue (store: TelemetryStore, fault: StoredFault, resolved: { symbol: string, backtrace?: BacktraceFrame[] }): { fault: StoredFault, occurrences: Occurrence[] } {
  const move = moveOf(fault, resolved)
  if (move === undefined) return { fault: { ...fault, ...resolved }, occurrences: [] }
  if (fault.issue !== null) void store.issueFaults.remove([fault.issue, fault.received_at, fault.device, fault.sequence])
  if (store.issueAliases.get(move.alias.pc) === undefined) void store.issueAliases.put(move.alias.pc, move.alias.issue)
  return { fault: move.fault, occurrences: move.occurrences }
}
