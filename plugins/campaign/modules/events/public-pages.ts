// The HTML of the public event pages, rendered on the server with no script: the event with its
// shifts and places left and the RSVP form, the confirmation, the cancel pages and the refusals. One
// small style sheet inline, allowed by its hash in the pages' own Content Security Policy (nothing
// else: no script, no frame, no foreign request). Laid out for a 390 px phone up to a desktop; every
// field has its label, errors are listed at the form's top and tied to their fields.
import { createHash } from 'node:crypto'
import escapeHtml from 'escape-html'
import { type EventRecord, shiftTime, type ShiftRecord, summary } from './event-book.js'
import { outcomeText, type RsvpForm, type RsvpResult } from './public-rsvp.js'

const STYLE = [
  '*{box-sizing:border-box}',
  'body{margin:0;font:1rem/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff}',
  'main{max-width:40rem;margin:0 auto;padding:1rem}',
  'h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}',
  'h2{font-size:1.2rem;margin:1.5rem 0 .5rem}',
  '.meta{margin:0 0 1rem;color:#333}',
  'fieldset{border:1px solid #767676;border-radius:.4rem;margin:0 0 1rem;padding:.5rem .75rem}',
  'legend{font-weight:600;padding:0 .25rem}',
  '.shift{display:flex;gap:.6rem;align-items:flex-start;padding:.4rem 0}',
  '.shift input{margin-top:.3rem;width:1.25rem;height:1.25rem;flex:none}',
  '.places{display:block;color:#333;font-size:.95rem}',
  '.field{margin:0 0 1rem}',
  '.field label{display:block;font-weight:600;margin-bottom:.25rem}',
  'input[type=text],input[type=email],input[type=tel]{width:100%;font:inherit;padding:.55rem .6rem;border:1px solid #767676;border-radius:.3rem;color:#1a1a1a;background:#fff}',
  'input:focus-visible,textarea:focus-visible,button:focus-visible{outline:3px solid #0b5394;outline-offset:2px}',
  'button{font:inherit;font-weight:600;color:#fff;background:#0b5394;border:0;border-radius:.3rem;padding:.7rem 1.4rem;cursor:pointer;width:100%;max-width:20rem}',
  '.errors{border:2px solid #a40000;border-radius:.4rem;padding:.5rem 1rem;margin:0 0 1rem;color:#a40000}',
  '.error{display:block;color:#a40000;font-weight:600}',
  '.field textarea{width:100%;font:inherit;padding:.55rem .6rem;border:1px solid #767676;border-radius:.3rem;color:#1a1a1a;background:#fff}',
  '.count{font-size:1.1rem;font-weight:600}',
  'progress{width:100%;height:1rem}',
  '.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}',
  'ul.outcomes{padding-left:1.2rem}'
].join('')

/** A public page's policy: its one style sheet by hash, forms posted to this site, framed by `frameAncestors` alone, nothing else. */
export const publicPolicy = (frameAncestors: string): string => [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  `frame-ancestors ${frameAncestors}`
].join('; ')

/** The public pages' policy: no page may frame them. */
export const PUBLIC_PAGE_POLICY = publicPolicy("'none'")

/** A whole public page: `body` (HTML) in the shell with the style sheet. */
export function page (title: string, body: string): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

/** A page saying one thing (a refusal, a link not valid). */
export function messagePage (title: string, ...paragraphs: string[]): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>${paragraphs.map(p => `<p>${escapeHtml(p)}</p>`).join('')}`)
}

/** The shifts a visitor may still sign up for: live and not started, by start. */
export const openShifts = (shifts: readonly ShiftRecord[], now = Date.now()): ShiftRecord[] =>
  shifts.filter(s => !s.cancelled && Date.parse(s.starts_at) > now)

function placesText (shift: ShiftRecord): string {
  const { free, waitlist_count: waiting } = summary(shift)
  if (free > 0) return `${free} of ${shift.capacity} ${shift.capacity === 1 ? 'place' : 'places'} left`
  return `Full: sign up to join the waitlist${waiting > 0 ? ` (${waiting} waiting)` : ''}`
}

/** What the form shows again after a refusal: the values sent and a message per field. */
export interface FormState {
  values: Partial<RsvpForm>
  /** Messages by field (`shift`, `name`, `email`, `phone`) or `form` for the whole form. */
  errors: Partial<Record<'form' | 'shift' | 'name' | 'email' | 'phone', string>>
}

const ERROR_ORDER = ['form', 'shift', 'name', 'email', 'phone'] as const

/** A labelled text input (or a textarea, type `textarea`), with its error tied to it. */
export function textField (name: string, label: string, type: string, autocomplete: string, max: number, required: boolean, value: string, error: string | undefined): string {
  const input = type === 'textarea'
    ? `<textarea id="f-${name}" name="${name}" rows="4" maxlength="${max}"${required ? ' required' : ''}`
    : `<input type="${type}" id="f-${name}" name="${name}" autocomplete="${autocomplete}" maxlength="${max}"${required ? ' required' : ''} value="${escapeHtml(value)}"`
  return `<div class="field"><label for="f-${name}">${escapeHtml(label)}</label>` +
    (error !== undefined ? `<span class="error" id="f-${name}-error">${escapeHtml(error)}</span>` : '') +
    input + (error !== undefined ? ` aria-invalid="true" aria-describedby="f-${name}-error"` : '') +
    (type === 'textarea' ? `>${escapeHtml(value)}</textarea></div>` : '></div>')
}

/** The form's messages listed at its top, announced (nothing when there are none). */
export function errorList (messages: ReadonlyArray<string | undefined>): string {
  const listed = messages.filter((m): m is string => m !== undefined)
  return listed.length === 0
    ? ''
    : `<div class="errors" role="alert"><p><strong>Please check the form:</strong></p><ul>${listed.map(m => `<li>${escapeHtml(m)}</li>`).join('')}</ul></div>`
}

/** A public form's end: the honeypot field people do not see, the signed form token and the button. */
export function formEnd (token: string, button: string): string {
  return '<div class="hp" aria-hidden="true"><label for="f-website">Leave this field empty</label><input type="text" id="f-website" name="website" tabindex="-1" autocomplete="off"></div>' +
    `<input type="hidden" name="token" value="${escapeHtml(token)}"><button type="submit">${escapeHtml(button)}</button></form>`
}

/** The event's public page with its RSVP form. */
export function eventPage (event: EventRecord, shifts: readonly ShiftRecord[], path: string, token: string, state: FormState = { values: {}, errors: {} }): string {
  const open = openShifts(shifts)
  const description = event.description.split(/\n\s*\n/).map(p => p.trim()).filter(p => p !== '').map(p => `<p>${escapeHtml(p)}</p>`).join('')
  const head = `<h1>${escapeHtml(event.title)}</h1><p class="meta"><strong>Where:</strong> ${escapeHtml(event.location.text)}</p>${description}`
  if (event.cancelled) return page(event.title, `${head}<p><strong>This event has been cancelled.</strong></p>`)
  if (open.length === 0) return page(event.title, `${head}<p>There are no shifts left to sign up for.</p>`)
  const chosen = new Set(state.values.shift_ids ?? [])
  const errors = errorList(ERROR_ORDER.map(key => state.errors[key]))
  const shiftError = state.errors.shift
  const shiftBoxes = open.map((shift, i) =>
    `<div class="shift"><input type="checkbox" id="s-${i}" name="shift" value="${escapeHtml(shift.shift_id)}"${chosen.has(shift.shift_id) || open.length === 1 ? ' checked' : ''}>` +
    `<label for="s-${i}">${escapeHtml(shiftTime(shift))}<span class="places">${escapeHtml(placesText(shift))}</span></label></div>`).join('')
  const form = `<h2 id="rsvp">Sign up</h2>${errors}<form method="post" action="${escapeHtml(path)}" aria-labelledby="rsvp">` +
    `<fieldset${shiftError !== undefined ? ' aria-describedby="shift-error"' : ''}><legend>Shifts</legend>` +
    (shiftError !== undefined ? `<span class="error" id="shift-error">${escapeHtml(shiftError)}</span>` : '') + `${shiftBoxes}</fieldset>` +
    textField('name', 'Your name', 'text', 'name', 200, true, state.values.name ?? '', state.errors.name) +
    textField('email', 'E-mail', 'email', 'email', 254, true, state.values.email ?? '', state.errors.email) +
    textField('phone', 'Phone (optional)', 'tel', 'tel', 40, false, state.values.phone ?? '', state.errors.phone) +
    formEnd(token, 'Sign up')
  return page(event.title, head + form)
}

/** The answer to an RSVP: what became of each shift chosen. */
export function confirmationPage (event: EventRecord, result: Pick<RsvpResult, 'shifts'>, emailed: boolean): string {
  const held = result.shifts.filter(s => s.outcome.status !== 'refused')
  const allWaiting = held.length > 0 && held.every(s => s.outcome.status === 'waitlisted')
  const title = held.length === 0 ? 'Not signed up' : allWaiting ? 'You are on the waitlist' : 'Thank you: you are signed up'
  const items = result.shifts.map(({ shift, outcome }) =>
    `<li data-outcome="${outcome.status}"><strong>${escapeHtml(shiftTime(shift))}</strong>: ${escapeHtml(outcomeText(outcome))}</li>`).join('')
  const mail = emailed && held.length > 0 ? '<p>We have sent a confirmation to the e-mail address you gave, with a calendar file and a link to cancel.</p>' : ''
  return page(title, `<h1>${escapeHtml(title)}</h1><p class="meta">${escapeHtml(event.title)}, ${escapeHtml(event.location.text)}</p><ul class="outcomes">${items}</ul>${mail}`)
}

/** The cancel link's page: what it cancels and a button (a GET changes nothing: mail scanners follow links). */
export function cancelConfirmPage (event: EventRecord | undefined, shifts: readonly ShiftRecord[], action: string): string {
  const what = event === undefined ? 'your RSVP' : `your RSVP for ${event.title}`
  const items = shifts.map(shift => `<li>${escapeHtml(shiftTime(shift))}</li>`).join('')
  return page('Cancel your RSVP', `<h1>Cancel your RSVP</h1><p>Press the button to cancel ${escapeHtml(what)}${items === '' ? '.' : ':'}</p>${items === '' ? '' : `<ul>${items}</ul>`}` +
    `<form method="post" action="${escapeHtml(action)}"><button type="submit">Cancel my RSVP</button></form>`)
}
