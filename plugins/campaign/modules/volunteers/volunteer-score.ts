// How well a volunteer fits a task: score = 0.5·skills + 0.3·availability + 0.2·distance, each in [0, 1].
// skills: share of the task's skills the volunteer has (1 when the task names none); availability:
// share of the task's time slots the volunteer is free in (1 when none); distance: 1 − d / max_km,
// at least 0, with d the great-circle distance in km (haversine, Earth radius 6371 km).
const WEIGHTS = { skills: 0.5, availability: 0.3, distance: 0.2 } as const
const EARTH_RADIUS_KM = 6371

export interface Place { lat: number, lon: number }

export interface ScoreParts {
  score: number
  skills: number
  availability: number
  distance_km: number
  distance: number
}

export function distanceKm (a: Place, b: Place): number {
  const rad = (deg: number): number => deg * Math.PI / 180
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lon - a.lon) / 2) ** 2
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** The share of `wanted` found in `offered` (case-insensitive); 1 when nothing is wanted. */
function coverage (wanted: readonly string[], offered: readonly string[]): number {
  const want = new Set(wanted.map(s => s.toLowerCase()))
  if (want.size === 0) return 1
  const have = new Set(offered.map(s => s.toLowerCase()))
  return [...want].filter(s => have.has(s)).length / want.size
}

const round = (n: number): number => Math.round(n * 1000) / 1000

export function volunteerScore (
  volunteer: { skills: readonly string[], availability: readonly string[], location: Place },
  task: { skills: readonly string[], slots: readonly string[], location: Place, max_km: number }
): ScoreParts {
  const skills = coverage(task.skills, volunteer.skills)
  const availability = coverage(task.slots, volunteer.availability)
  const km = distanceKm(volunteer.location, task.location)
  const distance = Math.max(0, 1 - km / task.max_km)
  const score = WEIGHTS.skills * skills + WEIGHTS.availability * availability + WEIGHTS.distance * distance
  return { score: round(score), skills: round(skills), availability: round(availability), distance_km: round(km), distance: round(distance) }
}
