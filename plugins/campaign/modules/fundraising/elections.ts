// Election cycles for contribution limits: each cycle has a general election and may have a primary
// ([campaign].election_cycles); without any configured, the United States federal cycles (a general on
// the Tuesday after the first Monday of November of each even year, no primary). A gift counts toward
// the election its donor designated, or the next one on or after the day it was received.
import { BadRequest, StartupError } from '../../../../kernel/index.js'
import { calendarDay } from '../../module-kit.js'

export const ELECTION_KINDS = ['primary', 'general'] as const
export type ElectionKind = typeof ELECTION_KINDS[number]

export interface ElectionCycle {
  name: string
  /** YYYY-MM-DD; a cycle without one has only its general election. */
  primary?: string
  general: string
}

export interface Election {
  /** `<cycle>-primary` or `<cycle>-general`. */
  id: string
  cycle: string
  kind: ElectionKind
  date: string
}

const SETTING = '[campaign].election_cycles'

/** The United States federal general election of `year`: the Tuesday after the first Monday of November. */
export function federalGeneralElection (year: number): string {
  const firstWeekday = new Date(Date.UTC(year, 10, 1)).getUTCDay()
  const firstMonday = 1 + (8 - firstWeekday) % 7
  return new Date(Date.UTC(year, 10, firstMonday + 1)).toISOString().slice(0, 10)
}

/** The cycle an election id belongs to. */
export const cycleOfElection = (id: string): string => id.replace(/-(primary|general)$/, '')

const electionOf = (cycle: ElectionCycle, kind: ElectionKind): Election => ({
  id: `${cycle.name}-${kind}`, cycle: cycle.name, kind, date: kind === 'primary' ? cycle.primary as string : cycle.general
})

export class Elections {
  /** Configured cycles by general election; empty: the federal cycles. */
  readonly #cycles: ElectionCycle[]

  /** Refuses (StartupError) a cycle whose days are not calendar days, a primary after its general, and two cycles with one name or general. */
  constructor (cycles: readonly ElectionCycle[]) {
    cycles.forEach((cycle, i) => {
      for (const kind of ELECTION_KINDS) {
        const day = cycle[kind]
        if (day === undefined) continue
        try {
          calendarDay(kind, day)
        } catch {
          throw new StartupError(`${SETTING}[${i}].${kind}: ${JSON.stringify(day)} is not a calendar day (YYYY-MM-DD)`)
        }
      }
      if (cycle.primary !== undefined && cycle.primary >= cycle.general) throw new StartupError(`${SETTING}[${i}]: the primary (${cycle.primary}) must come before the general election (${cycle.general})`)
    })
    this.#cycles = [...cycles].sort((a, b) => a.general.localeCompare(b.general))
    this.#cycles.forEach((cycle, i) => {
      const previous = this.#cycles[i - 1]
      if (previous === undefined) return
      if (previous.general === cycle.general) throw new StartupError(`${SETTING}: cycles "${previous.name}" and "${cycle.name}" have the same general election`)
      if (cycle.primary !== undefined && cycle.primary <= previous.general) throw new StartupError(`${SETTING}: the primary of "${cycle.name}" (${cycle.primary}) is not after the general election of "${previous.name}" (${previous.general})`)
    })
    if (new Set(cycles.map(c => c.name)).size !== cycles.length) throw new StartupError(`${SETTING}: two cycles have one name`)
  }

  /** Whether the cycles are configured (else the federal ones are used). */
  get configured (): boolean {
    return this.#cycles.length > 0
  }

  /** The cycle a day falls in: the first whose general election is on or after it; none after the last configured one. */
  cycleOf (day: string): ElectionCycle | undefined {
    if (this.configured) return this.#cycles.find(c => c.general >= day)
    const year = Number(day.slice(0, 4))
    const even = year % 2 === 0 ? (day <= federalGeneralElection(year) ? year : year + 2) : year + 1
    return { name: String(even), general: federalGeneralElection(even) }
  }

  /** The next election on or after `day`, if a cycle is configured for it. */
  nextOn (day: string): Election | undefined {
    const cycle = this.cycleOf(day)
    if (cycle === undefined) return undefined
    return electionOf(cycle, cycle.primary !== undefined && day <= cycle.primary ? 'primary' : 'general')
  }

  /**
   * The election a gift received on `day` counts toward: the designated one of the day's cycle, or the
   * next. 400 for a designated primary that is over or not configured, or a day after every cycle.
   */
  designate (field: string, day: string, designation: ElectionKind | null): Election {
    const cycle = this.cycleOf(day)
    if (cycle === undefined) throw new BadRequest(`invalid arguments: /${field}: no election cycle is configured on or after ${day} (${SETTING})`)
    if (designation === null) return this.nextOn(day) as Election
    if (designation === 'primary') {
      if (cycle.primary === undefined) throw new BadRequest(`invalid arguments: /election: the ${cycle.name} cycle has no primary configured (${SETTING})`)
      if (day > cycle.primary) throw new BadRequest(`invalid arguments: /election: a gift received on ${day} cannot count toward the ${cycle.name} primary, held on ${cycle.primary}`)
    }
    return electionOf(cycle, designation)
  }
}

/** How an election is named in messages: "the 2026 general election" for `2026-general`. */
export const electionName = (id: string): string => `the ${cycleOfElection(id)} ${id.slice(cycleOfElection(id).length + 1)} election`
