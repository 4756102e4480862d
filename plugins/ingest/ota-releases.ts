// OTA releases: a firmware image offered to a cohort (a group, or a percentage of the fleet) in stages
// (e.g. 10 → 50 → 100 percent of the cohort), advanced by an operator or on a schedule, paused,
// aborted, or halted by itself when the new version crashes more than the old ones by a factor, or when
// devices revert it (boot it, fail to confirm it, and go back to their other slot). Which
// devices are in a cohort and a stage is decided by a hash of the device id and the release (stable:
// a device in the 10% stays in at 50%). This module only decides; routes/ota.ts stores and serves.
import { createHash } from 'node:crypto'
import type { Device, StoredFault } from './storage/contract.js'

export const RELEASE_STATES = ['active', 'paused', 'halted', 'aborted'] as const
export type ReleaseState = typeof RELEASE_STATES[number]

export interface OtaImage {
  /** The SHA-256 of the image, hex: its id. */
  id: string
  software_type: string
  version: string
  size: number
  sha256: string
  /** Checked against the fleet's public key (`[ingest].ota_public_key`) when uploaded; absent on images uploaded before. */
  signed?: boolean
  uploaded_at: number
  uploaded_by: string
}

export interface Release {
  id: string
  image: string
  software_type: string
  version: string
  /** All devices of the software type (group null) or of one group; `percent` of them (1–100). */
  cohort: { group: string | null, percent: number }
  /** Percentages of the cohort, ascending, the last 100. */
  stages: number[]
  /** Index of the current stage. */
  stage: number
  /** Advance a stage every this many minutes; null: an operator advances. */
  advance_every_minutes: number | null
  /** Halt when the new version's crash rate passes the old versions' by this factor. */
  halt_factor: number
  /** Halt once this many devices reverted its image (absent on releases made before: DEFAULT_HALT_REVERTS). */
  halt_reverts?: number
  /** The devices that reverted its image (booted it, and went back to the other slot): offered it no more. */
  reverted?: string[]
  state: ReleaseState
  /** Why it halted (or who paused or aborted it). */
  reason: string | null
  created_at: number
  created_by: string
  stage_started_at: number
  updated_at: number
}

/** Faults on the new version before a halt is considered: one crash on one device is no trend. */
export const MIN_FAULTS_TO_HALT = 3
/** Reverts that halt a release unless it says otherwise. */
export const DEFAULT_HALT_REVERTS = 2

/** A device's place in [0, 100) for `salt`, the same at every call. */
export function bucketOf (device: string, salt: string): number {
  return createHash('sha256').update(`${salt}:${device}`).digest().readUInt32BE(0) % 10_000 / 100
}

/** Whether `release`'s cohort holds `device`: its software type, its group (when the release names one), and the cohort's percentage. */
export function inCohort (release: Release, device: Device): boolean {
  return device.software_type === release.software_type &&
    (release.cohort.group === null || device.group === release.cohort.group) &&
    bucketOf(device.id, `cohort:${release.id}`) < release.cohort.percent
}

/**
 * The release a device is offered: of the releases not aborted whose cohort holds it, the newest (it
 * supersedes the older ones, which offer that device nothing more; paused or halted, it still holds
 * its cohort, so a halt never rolls devices back to an older release), when it is active, its current
 * stage holds the device, the device does not run its version yet, and did not revert it.
 */
export function releaseFor (releases: readonly Release[], device: Device): Release | undefined {
  const newest = releases.filter(r => r.state !== 'aborted' && inCohort(r, device)).sort((a, b) => b.created_at - a.created_at)[0]
  if (newest?.state !== 'active' || device.software_version === newest.version || bucketOf(device.id, `stage:${newest.id}`) >= newest.stages[newest.stage]) return undefined
  return newest.reverted?.includes(device.id) === true ? undefined : newest
}

/** The release moved to its next stage (unchanged at the last). */
export function advanced (release: Release, now: number): Release {
  if (release.stage >= release.stages.length - 1) return release
  return { ...release, stage: release.stage + 1, stage_started_at: now, updated_at: now }
}

/** Whether a scheduled release is due for its next stage at `now`. */
export function due (release: Release, now: number): boolean {
  return release.state === 'active' && release.advance_every_minutes !== null && release.stage < release.stages.length - 1 &&
    now - release.stage_started_at >= release.advance_every_minutes * 60_000
}

export interface CrashRates {
  new: { faults: number, devices: number, rate: number }
  old: { faults: number, devices: number, rate: number }
}

/** Faults per device since the release began: on its version, and on the software type's other versions. */
export function crashRates (release: Release, devices: readonly Device[], faults: readonly StoredFault[]): CrashRates {
  const ofType = devices.filter(d => d.software_type === release.software_type)
  const onNew = new Set(ofType.filter(d => d.software_version === release.version).map(d => d.id))
  const onOld = new Set(ofType.filter(d => d.software_version !== release.version).map(d => d.id))
  const counted = faults.filter(f => f.received_at >= release.created_at)
  const newFaults = counted.filter(f => f.software_version === release.version && onNew.has(f.device)).length
  const oldFaults = counted.filter(f => f.software_version !== release.version && onOld.has(f.device)).length
  const rate = (n: number, of: number): number => of === 0 ? 0 : n / of
  return {
    new: { faults: newFaults, devices: onNew.size, rate: rate(newFaults, onNew.size) },
    old: { faults: oldFaults, devices: onOld.size, rate: rate(oldFaults, onOld.size) }
  }
}

/** Why an active release should halt, or undefined. */
export function haltReason (release: Release, rates: CrashRates): string | undefined {
  if (release.state !== 'active' || rates.new.faults < MIN_FAULTS_TO_HALT || rates.new.rate <= release.halt_factor * rates.old.rate) return undefined
  const perDevice = (r: CrashRates['new']): string => `${r.rate.toFixed(2)} faults a device (${r.faults} on ${r.devices})`
  return `version ${release.version} crashed ${perDevice(rates.new)} since the release began, against ${perDevice(rates.old)} on the other versions: ` +
    `more than ${release.halt_factor}× the old rate`
}

/** Why an active release should halt on the reverts of its image (`offered`: the devices it was offered to), or undefined. */
export function revertHaltReason (release: Release, offered: number): string | undefined {
  const reverts = release.reverted?.length ?? 0
  const limit = release.halt_reverts ?? DEFAULT_HALT_REVERTS
  if (release.state !== 'active' || reverts < limit) return undefined
  const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`
  return `${plural(reverts, 'revert')} of ${plural(offered, 'device')} offered version ${release.version} (it halts at ${limit})`
}
