// The public event pages on the app listener, open to everyone without a session, showing only events
// staff published:
// - GET /e/{slug-or-id}: the event, its shifts with the places left, and the RSVP form;
// - POST /e/{slug-or-id}: the form (application/x-www-form-urlencoded, at most MAX_FORM_BYTES, public-kit.ts): at most
//   `perMinute` posts per client address (429), a signed single-use form token within its time window,
//   a honeypot field (filled: an answer like a success, nothing stored or sent), the fields' limits
//   (400 with the form shown again and the messages);
// - GET /rsvp/cancel?t=…: what the signed link cancels and a button; POST cancels (a scanner that
//   follows the link cancels nothing); an altered link answers 400, a used one says it was cancelled.
// Every page has its own policy (public-pages.ts): no script at all.
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { normalEmail, normalPhone } from '../people/index.js'
import { type EventRecord, summary } from './event-book.js'
import { EMAIL, limited, linkToken, MAX_REF_CHARS, NOT_A_FORM, readForms, sendPage as send, single, TOKEN_REFUSALS } from './public-kit.js'
import { cancelConfirmPage, confirmationPage, eventPage, type FormState, messagePage, openShifts } from './public-pages.js'
import type { PublicRsvps, RsvpForm } from './public-rsvp.js'
import type { PublicTokens } from './public-tokens.js'
import type { PageViews } from './page-views.js'
import type { RateLimit } from './rate-limit.js'

/** Most values of one form field (shifts chosen). */
const MAX_SHIFTS = 50

export interface PublicRouteOptions {
  rsvps: PublicRsvps
  tokens: PublicTokens
  /** The posts each client address may make (shared by every public page). */
  limit: RateLimit
  /** Where each page served is counted. */
  views: PageViews
  log: Logger
}

const NOT_FOUND = messagePage('Event not found', 'There is no public event at this address. It may have been taken down; check the link you were given.')
const BAD_LINK = messagePage('Cancel link not valid', 'This link is incomplete or was altered. Please use the link from the e-mail exactly as it came.')

/** The form's fields checked: the values to sign up with, or the messages to show. */
export function checkForm (form: URLSearchParams, shiftIds: ReadonlySet<string>): { form: RsvpForm } | { state: FormState } {
  const errors: FormState['errors'] = {}
  const name = single(form, 'name')
  const email = single(form, 'email')
  const phoneText = single(form, 'phone')
  const shifts = form.getAll('shift')
  const values: Partial<RsvpForm> = { name: name?.slice(0, 200), email: email?.slice(0, 254), phone: phoneText?.slice(0, 40), shift_ids: shifts.filter(id => shiftIds.has(id)) }
  if (name === undefined || name === '') errors.name = 'Enter your name.'
  else if (name.length > 200) errors.name = 'Your name may be at most 200 characters.'
  if (email === undefined || email === '') errors.email = 'Enter your e-mail address.'
  else if (email.length > 254 || !EMAIL.test(email)) errors.email = 'Enter an e-mail address like name@example.com.'
  let phone = ''
  if (phoneText === undefined || phoneText.length > 40) errors.phone = 'A phone number may be at most 40 characters.'
  else {
    try {
      phone = normalPhone(phoneText)
    } catch {
      errors.phone = 'Enter a phone number of 6 to 15 digits, or leave it empty.'
    }
  }
  if (shifts.length === 0) errors.shift = 'Choose at least one shift.'
  else if (shifts.length > MAX_SHIFTS || new Set(shifts).size !== shifts.length || shifts.some(id => !shiftIds.has(id))) errors.shift = 'Choose shifts listed on this page (one of them has started or was taken down).'
  if (Object.keys(errors).length > 0) return { state: { values, errors } }
  return { form: { name: name as string, email: normalEmail(email as string), phone, shift_ids: shifts } }
}

export function publicRoutes ({ rsvps, tokens, limit, views, log }: PublicRouteOptions): FastifyPluginAsync {
  const book = rsvps.book
  const open = { config: { access: 'open' as const } }

  const published = async (ref: string): Promise<EventRecord | undefined> =>
    ref.length > MAX_REF_CHARS ? undefined : await book.publishedEvent(ref)

  const showForm = async (reply: FastifyReply, status: number, event: EventRecord, ref: string, state?: FormState): Promise<FastifyReply> =>
    await send(reply, status, eventPage(event, await book.shiftsOf(event.event_id), `/e/${encodeURIComponent(ref)}`, await tokens.formToken(event.event_id), state))

  return async app => {
    readForms(app, log, 'public event page')

    app.get<{ Params: { ref: string } }>('/e/:ref', open, async (request, reply) => {
      const event = await published(request.params.ref)
      if (event === undefined) return await send(reply, 404, NOT_FOUND)
      views.view(`event:${event.event_id}`)
      return await showForm(reply, 200, event, request.params.ref)
    })

    app.post<{ Params: { ref: string } }>('/e/:ref', open, async (request, reply) => {
      const refused = await limited(limit, request, reply)
      if (refused !== undefined) return refused
      const event = await published(request.params.ref)
      if (event === undefined) return await send(reply, 404, NOT_FOUND)
      if (!(request.body instanceof URLSearchParams)) return await send(reply, 400, NOT_A_FORM)
      const body = request.body
      const shifts = openShifts(await book.shiftsOf(event.event_id))
      const checked = checkForm(body, new Set(shifts.map(s => s.shift_id)))
      const token = await tokens.useFormToken(single(body, 'token') ?? '', event.event_id)
      if (!token.ok) {
        const values = 'form' in checked ? checked.form : checked.state.values
        return await showForm(reply, 400, event, request.params.ref, { values, errors: { form: TOKEN_REFUSALS[token.reason] } })
      }
      if ('state' in checked) return await showForm(reply, 400, event, request.params.ref, checked.state)
      if (single(body, 'website') !== '') {
        // The honeypot: only a script fills the field people do not see. It is answered as if signed up, and nothing is kept or sent.
        const chosen = shifts.filter(s => checked.form.shift_ids.includes(s.shift_id))
        return await send(reply, 200, confirmationPage(event, {
          shifts: chosen.map(shift => ({ shift, outcome: summary(shift).free > 0 ? { status: 'confirmed' } : { status: 'waitlisted', position: shift.waitlist.length + 1 } }))
        }, rsvps.emailOn))
      }
      return await send(reply, 200, confirmationPage(event, await rsvps.submit(event, checked.form), rsvps.emailOn))
    })

    app.get('/rsvp/cancel', open, async (request, reply) => {
      const token = linkToken(request)
      const rsvpId = token === undefined ? undefined : await tokens.readCancelToken(token)
      if (rsvpId === undefined || token === undefined) return await send(reply, 400, BAD_LINK)
      const record = await rsvps.rsvp(rsvpId)
      if (record === undefined) return await send(reply, 404, messagePage('Nothing to cancel', 'This RSVP is no longer kept.'))
      if (record.cancelled_at !== null) return await send(reply, 200, messagePage('Already cancelled', 'This RSVP was cancelled already; nothing more to do.'))
      const event = (await book.events()).find(e => e.event_id === record.event_id)
      const shifts = (await book.shiftsOf(record.event_id)).filter(s => record.shift_ids.includes(s.shift_id))
      return await send(reply, 200, cancelConfirmPage(event, shifts, `/rsvp/cancel?t=${encodeURIComponent(token)}`))
    })

    app.post('/rsvp/cancel', open, async (request, reply) => {
      const refused = await limited(limit, request, reply)
      if (refused !== undefined) return refused
      const token = linkToken(request)
      const rsvpId = token === undefined ? undefined : await tokens.readCancelToken(token)
      if (rsvpId === undefined) return await send(reply, 400, BAD_LINK)
      const done = await rsvps.cancel(rsvpId)
      if (done === undefined) return await send(reply, 404, messagePage('Nothing to cancel', 'This RSVP is no longer kept.'))
      if (done.already) return await send(reply, 200, messagePage('Already cancelled', 'This RSVP was cancelled already; nothing more to do.'))
      return await send(reply, 200, messagePage('RSVP cancelled', 'Your RSVP is cancelled and your place has gone to the next person waiting, if any. Thank you for letting us know.'))
    })
  }
}
