// Crash issues: faults grouped by a signature (the function a symbolicated fault stopped in, else its
// program counter within its build), each with its count, first and last seen, the devices, software
// versions and hours it occurred in, and a status (open, resolved, ignored). A fault from a software
// version newer than the one a resolved issue was resolved in reopens it as a regression. This module
// only computes: a storage reads the rows an update touches, inside the transaction that stores or
// symbolicates the faults, and writes back what applyOccurrences returns.
import { createHash } from 'node:crypto'
import { decodeFault } from './fault-status.js'
import type { BacktraceFrame, StoredFault } from './storage/contract.js'

export const ISSUE_STATUSES = ['open', 'resolved', 'ignored'] as const
export type IssueStatus = typeof ISSUE_STATUSES[number]

/** What an issue counts its occurrences by: the devices, the software versions and the hours (start, ms). */
export const MEMBER_KINDS = ['device', 'version', 'hour'] as const
export type MemberKind = typeof MEMBER_KINDS[number]

export interface CrashIssue {
  id: string
  signature: string
  title: string
  /** 'symbol': grouped by the function of symbolicated faults; 'pc': by program counter within a build, until its ELF is known. */
  grouping: 'symbol' | 'pc'
  count: number
  device_count: number
  first_seen: number
  last_seen: number
  /** The newest software version it was seen in (numeric-aware order), or null. */
  latest_version: string | null
  status: IssueStatus
  status_changed_at: number | null
  status_changed_by: string | null
  /** The newest version seen when it was resolved: a fault from a newer one reopens it. */
  resolved_version: string | null
  /** Reopened by a fault from a version newer than the one it was resolved in. */
  regression: boolean
  regressed_at: number | null
}

/** How often an issue occurred on one device, in one version, or in one hour. */
export interface IssueMember {
  issue: string
  kind: MemberKind
  member: string
  count: number
  last_seen: number
}

export type MemberRef = readonly [issue: string, kind: MemberKind, member: string]

/** Which issue a fault belongs to. */
export interface IssueIdentity {
  id: string
  signature: string
  title: string
  grouping: CrashIssue['grouping']
}

/** A fault joining (+1) or leaving (-1, when symbolication moves it) an issue. */
export interface Occurrence {
  issue: IssueIdentity
  fault: StoredFault
  sign: 1 | -1
}

/** What an update tells the rest of the plugin, once committed. */
export type IssueEvent =
  | { kind: 'issue.new', issue: string, title: string, at: number }
  | { kind: 'issue.regressed', issue: string, title: string, version: string | null, at: number }

/** The rows an update reads: the issues and members it touches (absent ones are new). */
export interface IssueRows {
  issues: Map<string, CrashIssue>
  members: Map<string, IssueMember>
}

export interface IssueUpdate {
  put: CrashIssue[]
  removed: string[]
  members: IssueMember[]
  removedMembers: MemberRef[]
  events: IssueEvent[]
}

const HOUR_MS = 3_600_000
const hex = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, '0')}`
const idOf = (signature: string): string => createHash('sha256').update(signature).digest('hex').slice(0, 16)

/** A member's key in IssueRows.members. */
export const memberId = (ref: MemberRef): string => ref.join('\u0000')

/** One collator for every comparison: `localeCompare` with options builds one per call, which showed in the ingest profile. */
const VERSION_ORDER = new Intl.Collator('en', { numeric: true })
/** Order of software versions: numeric parts compared as numbers (1.10.0 after 1.9.2). */
export const compareVersions = (a: string, b: string): number => VERSION_ORDER.compare(a, b)

/** A program counter as every view names it: 8 hex digits, the Thumb bit cleared (0x08000c01 is the instruction at 0x08000c00). */
export const codeAddress = (pc: number): string => hex(pc & ~1)

/** The issue of a fault not (yet) symbolicated: its program counter within its build. */
export function pcIssue (fault: Pick<StoredFault, 'pc' | 'build_id' | 'cfsr' | 'hfsr' | 'mmfar' | 'bfar'>): IssueIdentity {
  const pc = codeAddress(fault.pc)
  const signature = `pc ${fault.build_id ?? 'unknown-build'} ${pc}`
  return { id: idOf(signature), signature, title: `${decodeFault(fault).kind} at ${pc}${fault.build_id === null ? '' : ` (build ${fault.build_id.slice(0, 12)})`}`, grouping: 'pc' }
}

/** How many of a backtrace's frames make an issue's signature: the function that faulted and its caller. */
export const SIGNATURE_FRAMES = 2

/** A frame's function: its symbol up to ` at `. */
const functionOf = (symbol: string): string => symbol.split(' at ')[0]

/**
 * The issue of a symbolicated fault (`symbol`: `<function> at <file>:<line>`, and the backtrace when
 * unwound): its top frames' functions; undefined when it could not be symbolicated.
 */
export function symbolIssue (fault: Pick<StoredFault, 'cfsr' | 'hfsr' | 'mmfar' | 'bfar'>, symbol: string | null, backtrace?: readonly BacktraceFrame[]): IssueIdentity | undefined {
  if (symbol === null || symbol.startsWith('unsymbolicated')) return undefined
  const frames = backtrace !== undefined && backtrace.length > 0 ? backtrace.slice(0, SIGNATURE_FRAMES).map(frame => functionOf(frame.symbol)) : [functionOf(symbol)]
  const signature = `in ${frames.join(' < ')}`
  const caller = frames.length > 1 ? ` (from ${frames[1]})` : ''
  return { id: idOf(signature), signature, title: `${decodeFault(fault).kind} in ${frames[0]}${caller}`, grouping: 'symbol' }
}

/** The issue a stored fault belongs to now. */
export function issueOf (fault: StoredFault): IssueIdentity {
  return symbolIssue(fault, fault.symbol, fault.backtrace) ?? pcIssue(fault)
}

const hourOf = (at: number): string => String(Math.floor(at / HOUR_MS) * HOUR_MS)

function membersOf ({ issue, fault }: Occurrence): MemberRef[] {
  const refs: MemberRef[] = [[issue.id, 'device', fault.device], [issue.id, 'hour', hourOf(fault.received_at)]]
  if (fault.software_version !== null) refs.push([issue.id, 'version', fault.software_version])
  return refs
}

/** The issues and members `occurrences` touch, each once, in one order (so transactions lock them alike). */
export function touched (occurrences: readonly Occurrence[]): { issues: string[], members: MemberRef[] } {
  const members = new Map<string, MemberRef>()
  for (const occurrence of occurrences) for (const ref of membersOf(occurrence)) members.set(memberId(ref), ref)
  return {
    issues: [...new Set(occurrences.map(o => o.issue.id))].sort(),
    members: [...members].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, ref]) => ref)
  }
}

function newIssue (identity: IssueIdentity, at: number): CrashIssue {
  return {
    ...identity, count: 0, device_count: 0, first_seen: at, last_seen: at, latest_version: null, status: 'open',
    status_changed_at: null, status_changed_by: null, resolved_version: null, regression: false, regressed_at: null
  }
}

/**
 * Apply `occurrences` to the rows read: counts, first/last seen, members (removed at zero), the newest
 * version, regressions; an issue left with no occurrence is removed. Removing an occurrence leaves
 * first/last seen as they were.
 */
export function applyOccurrences (rows: IssueRows, occurrences: readonly Occurrence[]): IssueUpdate {
  const issues = new Map(rows.issues)
  const members = new Map(rows.members)
  const events: IssueEvent[] = []
  const created = new Set<string>()
  for (const occurrence of occurrences) {
    const { issue: identity, fault, sign } = occurrence
    const at = fault.received_at
    let issue = issues.get(identity.id)
    if (issue === undefined) {
      if (sign < 0) continue
      issue = newIssue(identity, at)
      created.add(identity.id)
    } else {
      issue = { ...issue }
    }
    issue.count += sign
    for (const ref of membersOf(occurrence)) {
      const key = memberId(ref)
      const current = members.get(key)
      const count = (current?.count ?? 0) + sign
      if (ref[1] === 'device' && (current === undefined || current.count <= 0) && count > 0) issue.device_count++
      if (ref[1] === 'device' && current !== undefined && current.count > 0 && count <= 0) issue.device_count--
      members.set(key, { issue: ref[0], kind: ref[1], member: ref[2], count, last_seen: Math.max(current?.last_seen ?? 0, sign > 0 ? at : 0) })
    }
    if (sign > 0) {
      issue.first_seen = Math.min(issue.first_seen, at)
      issue.last_seen = Math.max(issue.last_seen, at)
      const version = fault.software_version
      if (version !== null && (issue.latest_version === null || compareVersions(version, issue.latest_version) > 0)) issue.latest_version = version
      if (issue.status === 'resolved' && version !== null && (issue.resolved_version === null || compareVersions(version, issue.resolved_version) > 0)) {
        issue = { ...issue, status: 'open', regression: true, regressed_at: at, status_changed_at: at, status_changed_by: null }
        events.push({ kind: 'issue.regressed', issue: issue.id, title: issue.title, version, at })
      }
    }
    issues.set(identity.id, issue)
  }
  const update: IssueUpdate = { put: [], removed: [], members: [], removedMembers: [], events }
  for (const [id, issue] of issues) {
    if (issue === rows.issues.get(id)) continue
    if (issue.count <= 0) {
      if (rows.issues.has(id)) update.removed.push(id)
    } else {
      update.put.push(issue)
      if (created.has(id)) events.unshift({ kind: 'issue.new', issue: id, title: issue.title, at: issue.first_seen })
    }
  }
  for (const [key, member] of members) {
    if (member === rows.members.get(key)) continue
    if (member.count <= 0) {
      if (rows.members.has(key)) update.removedMembers.push([member.issue, member.kind, member.member])
    } else update.members.push(member)
  }
  return update
}

/** An issue's status set by `by` at `at`: resolving records the newest version seen, and clears a regression. */
export function withStatus (issue: CrashIssue, status: IssueStatus, by: string, at: number): CrashIssue {
  return {
    ...issue,
    status,
    status_changed_at: at,
    status_changed_by: by,
    resolved_version: status === 'resolved' ? issue.latest_version : issue.resolved_version,
    regression: status === 'open' ? issue.regression : false
  }
}

/**
 * The occurrences of newly stored faults, each fault's `issue` set: a fault whose PC within its build
 * was symbolicated before joins that symbol's issue at once (`aliasOf`: by the PC issue's id).
 */
export function newOccurrences (faults: readonly StoredFault[], aliasOf: (pcIssue: string) => IssueIdentity | undefined): Occurrence[] {
  return faults.map(fault => {
    const pc = pcIssue(fault)
    const issue = aliasOf(pc.id) ?? pc
    fault.issue = issue.id
    return { issue, fault, sign: 1 as const }
  })
}

/** A symbolicated fault's move from the issue it was in to its symbol's, and the alias its PC issue gets. */
export interface Move {
  occurrences: [Occurrence, Occurrence]
  alias: { pc: string, issue: IssueIdentity }
  /** The fault as stored after the move. */
  fault: StoredFault
}

/** The move a resolved symbol (and backtrace) makes of `fault` (as stored, before they are set), or undefined when it stays in its issue. */
export function moveOf (fault: StoredFault, resolved: { symbol: string, backtrace?: BacktraceFrame[] }): Move | undefined {
  const target = symbolIssue(fault, resolved.symbol, resolved.backtrace)
  if (target === undefined) return undefined
  const from = fault.issue ?? pcIssue(fault).id
  if (from === target.id) return undefined
  const moved = { ...fault, ...resolved, issue: target.id }
  return {
    occurrences: [{ issue: { ...pcIssue(fault), id: from }, fault, sign: -1 }, { issue: target, fault: moved, sign: 1 }],
    alias: { pc: pcIssue(fault).id, issue: target },
    fault: moved
  }
}
