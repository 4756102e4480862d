// The public forms and petitions on the app listener, open to everyone without a session, with the
// event pages' abuse controls (public-kit.ts):
// - GET /f/{slug-or-id}: the form, framed by no site (frame-ancestors 'none');
// - GET /f/{slug-or-id}/embed: the same form for an iframe, framed only by the sites of the
//   public_embed_hosts setting (none when empty); its form posts to the embed path, answered under the
//   same policy;
// - POST /f/{slug-or-id}[/embed]: the form: the per-address limit (429), a signed single-use form
//   token within its time window, the honeypot, the fields' limits (400 with the form and messages);
// - GET /consent/confirm?t=…: the signed link of the e-mail asking to confirm a consent, with a button;
//   POST confirms (a scanner that follows the link confirms nothing); altered answers 400, a second
//   time says it was confirmed already.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { normalEmail, normalPhone } from '../people/index.js'
import { confirmConsentPage, FIELD_INPUTS, formPage, type SignState, thanksPage } from './form-pages.js'
import { EMAIL, limited, linkToken, MAX_REF_CHARS, NOT_A_FORM, readForms, sendPage, single, TOKEN_REFUSALS } from './public-kit.js'
import type { FormRecord, PublicForms, SignatureForm } from './public-forms.js'
import { messagePage, PUBLIC_PAGE_POLICY, publicPolicy } from './public-pages.js'
import type { PublicTokens } from './public-tokens.js'
import type { PageViews } from './page-views.js'
import type { RateLimit } from './rate-limit.js'

export interface FormRouteOptions {
  forms: PublicForms
  tokens: PublicTokens
  limit: RateLimit
  /** The sites that may frame the embed page (public_embed_hosts); empty: none. */
  embedHosts: readonly string[]
  /** Where each page served is counted (the embed page with the form's own). */
  views: PageViews
  log: Logger
}

const NOT_FOUND = messagePage('Form not found', 'There is no public form at this address. It may have been taken down; check the link you were given.')
const BAD_LINK = messagePage('Link not valid', 'This link is incomplete or was altered. Please use the link from the e-mail exactly as it came.')
const GONE = messagePage('Nothing to confirm', 'This signature is no longer kept.')
const ALREADY = messagePage('Already confirmed', 'You confirmed e-mail updates already; nothing more to do.')
const POSTCODE = /^[A-Za-z0-9][A-Za-z0-9 -]*$/

/** The form's fields checked: what to sign with, or the form's state with its messages. */
export function checkSignature (form: FormRecord, body: URLSearchParams): { sent: SignatureForm } | { state: SignState } {
  const values: SignState['values'] = {}
  const errors: SignState['errors'] = {}
  for (const { field, required } of form.fields) {
    const input = FIELD_INPUTS[field]
    const value = single(body, field)
    values[field] = value?.slice(0, input.max)
    if (value === undefined || (value === '' && required)) errors[field] = `Enter your ${input.label.toLowerCase()}.`
    else if (value.length > input.max) errors[field] = `${input.label} may be at most ${input.max} characters.`
    else if (value === '') continue
    else if (field === 'email' && !EMAIL.test(value)) errors[field] = 'Enter an e-mail address like name@example.com.'
    else if (field === 'postcode' && !POSTCODE.test(value)) errors[field] = 'Enter a postcode of letters, digits, spaces and dashes.'
    else if (field === 'phone') {
      try {
        values.phone = normalPhone(value)
      } catch {
        errors[field] = 'Enter a phone number of 6 to 15 digits, or leave it empty.'
      }
    }
  }
  const boxes = body.getAll('consent')
  const ticked = boxes.filter(box => /^\d{1,2}$/.test(box)).map(Number).filter(i => i < form.consents.length)
  if (ticked.length !== boxes.length || new Set(ticked).size !== ticked.length) errors.consent = 'Tick only the boxes shown on this page.'
  if (Object.keys(errors).length > 0) return { state: { values, ticked, errors } }
  return { sent: { values: { ...values, email: normalEmail(values.email as string) }, ticked } }
}

export function formRoutes ({ forms, tokens, limit, embedHosts, views, log }: FormRouteOptions): FastifyPluginAsync {
  const open = { config: { access: 'open' as const } }
  const embedPolicy = publicPolicy(embedHosts.length === 0 ? "'none'" : embedHosts.join(' '))
  const published = async (ref: string): Promise<FormRecord | undefined> =>
    ref.length > MAX_REF_CHARS ? undefined : await forms.published(ref)

  const show = (embed: boolean) => async (request: FastifyRequest<{ Params: { ref: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const policy = embed ? embedPolicy : PUBLIC_PAGE_POLICY
    const form = await published(request.params.ref)
    if (form === undefined) return await sendPage(reply, 404, NOT_FOUND, policy)
    views.view(`form:${form.form_id}`)
    const action = `/f/${encodeURIComponent(request.params.ref)}${embed ? '/embed' : ''}`
    return await sendPage(reply, 200, formPage(form, action, await tokens.formToken(form.form_id)), policy)
  }

  const sign = (embed: boolean) => async (request: FastifyRequest<{ Params: { ref: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const policy = embed ? embedPolicy : PUBLIC_PAGE_POLICY
    const refused = await limited(limit, request, reply, policy)
    if (refused !== undefined) return refused
    const form = await published(request.params.ref)
    if (form === undefined) return await sendPage(reply, 404, NOT_FOUND, policy)
    if (!(request.body instanceof URLSearchParams)) return await sendPage(reply, 400, NOT_A_FORM, policy)
    const body = request.body
    const action = `/f/${encodeURIComponent(request.params.ref)}${embed ? '/embed' : ''}`
    const again = async (state: SignState): Promise<FastifyReply> => await sendPage(reply, 400, formPage(form, action, await tokens.formToken(form.form_id), state), policy)
    const checked = checkSignature(form, body)
    const token = await tokens.useFormToken(single(body, 'token') ?? '', form.form_id)
    if (!token.ok) {
      const state = 'sent' in checked ? { ...checked.sent, errors: {} } : checked.state
      return await again({ ...state, errors: { form: TOKEN_REFUSALS[token.reason] } })
    }
    if ('state' in checked) return await again(checked.state)
    const askedEmail = checked.sent.ticked.some(i => form.consents[i].email)
    // The honeypot: only a script fills the field people do not see. It is thanked, and nothing is kept or sent.
    if (single(body, 'website') === '') await forms.sign(form, checked.sent)
    return await sendPage(reply, 200, thanksPage(form, askedEmail, forms.emailOn), policy)
  }

  return async app => {
    readForms(app, log, 'public form')
    app.get('/f/:ref', open, show(false))
    app.get('/f/:ref/embed', open, show(true))
    app.post('/f/:ref', open, sign(false))
    app.post('/f/:ref/embed', open, sign(true))

    app.get('/consent/confirm', open, async (request, reply) => {
      const token = linkToken(request)
      const id = token === undefined ? undefined : await tokens.readLinkToken('consent', token)
      if (id === undefined || token === undefined) return await sendPage(reply, 400, BAD_LINK)
      const signature = await forms.signature(id)
      if (signature === undefined) return await sendPage(reply, 404, GONE)
      if (signature.email_consent === 'confirmed') return await sendPage(reply, 200, ALREADY)
      return await sendPage(reply, 200, confirmConsentPage(await forms.formOf(signature), `/consent/confirm?t=${encodeURIComponent(token)}`))
    })

    app.post('/consent/confirm', open, async (request, reply) => {
      const refused = await limited(limit, request, reply)
      if (refused !== undefined) return refused
      const token = linkToken(request)
      const id = token === undefined ? undefined : await tokens.readLinkToken('consent', token)
      if (id === undefined) return await sendPage(reply, 400, BAD_LINK)
      const done = await forms.confirm(id)
      if (done.status === 'gone') return await sendPage(reply, 404, GONE)
      if (done.status === 'already') return await sendPage(reply, 200, ALREADY)
      return await sendPage(reply, 200, messagePage('E-mail updates confirmed', 'Thank you: you will get campaign updates at this address. Each e-mail has a link to stop them.'))
    })
  }
}
