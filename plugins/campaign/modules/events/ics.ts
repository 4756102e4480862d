// The calendar file attached to an RSVP's confirmation (RFC 5545, written by hand: one VEVENT per
// shift, a few properties): text values escaped (backslash, semicolon, comma, line breaks), times in
// UTC, lines folded at 75 octets without splitting a UTF-8 character, CRLF line ends.
export interface CalendarShift {
  uid: string
  starts_at: string
  ends_at: string
  summary: string
  description: string
  location: string
  geo?: { lat: number, lon: number }
  /** A waitlisted place is TENTATIVE. */
  confirmed: boolean
}

/** A TEXT value (RFC 5545 3.3.11). */
export const icsText = (text: string): string =>
  text.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r\n|\r|\n/g, '\\n')

/** A DATE-TIME in UTC: 20260606T080000Z. */
export const icsTime = (iso: string): string => new Date(iso).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')

/** One content line folded into lines of at most 75 octets, each continuation starting with a space (RFC 5545 3.1). */
export function fold (line: string): string {
  const out: string[] = []
  let current = ''
  let octets = 0
  for (const char of line) {
    const size = Buffer.byteLength(char)
    const limit = out.length === 0 ? 75 : 74
    if (octets + size > limit) {
      out.push(current)
      current = ''
      octets = 0
    }
    current += char
    octets += size
  }
  out.push(current)
  return out.join('\r\n ')
}

export function calendar (shifts: readonly CalendarShift[], stamp: Date): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Berth//Campaign events//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    ...shifts.flatMap(shift => [
      'BEGIN:VEVENT',
      `UID:${shift.uid}`,
      `DTSTAMP:${icsTime(stamp.toISOString())}`,
      `DTSTART:${icsTime(shift.starts_at)}`,
      `DTEND:${icsTime(shift.ends_at)}`,
      `SUMMARY:${icsText(shift.summary)}`,
      ...(shift.description !== '' ? [`DESCRIPTION:${icsText(shift.description)}`] : []),
      `LOCATION:${icsText(shift.location)}`,
      ...(shift.geo !== undefined ? [`GEO:${shift.geo.lat};${shift.geo.lon}`] : []),
      `STATUS:${shift.confirmed ? 'CONFIRMED' : 'TENTATIVE'}`,
      'END:VEVENT'
    ]),
    'END:VCALENDAR'
  ]
  return lines.map(fold).join('\r\n') + '\r\n'
}
