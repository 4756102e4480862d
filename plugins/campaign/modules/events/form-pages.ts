// The HTML of the public forms and petitions, in the public pages' shell (public-pages.ts: no script,
// one style sheet by hash): the form with the fields it asks, its consent boxes and, for a petition,
// the signatures against the target; the thanks; the consent link's page with its button.
import escapeHtml from 'escape-html'
import type { FormField, FormRecord } from './public-forms.js'
import { errorList, formEnd, page, textField } from './public-pages.js'

/** Each field's label, input type, autocomplete token and most characters. */
export const FIELD_INPUTS: Readonly<Record<FormField, { label: string, type: string, autocomplete: string, max: number }>> = {
  first_name: { label: 'First name', type: 'text', autocomplete: 'given-name', max: 100 },
  last_name: { label: 'Last name', type: 'text', autocomplete: 'family-name', max: 100 },
  email: { label: 'E-mail', type: 'email', autocomplete: 'email', max: 254 },
  phone: { label: 'Phone', type: 'tel', autocomplete: 'tel', max: 40 },
  postcode: { label: 'Postcode', type: 'text', autocomplete: 'postal-code', max: 20 },
  comment: { label: 'Comment', type: 'textarea', autocomplete: 'off', max: 2000 }
}

/** What the form shows again after a refusal: the values sent, the boxes ticked and a message per field (`form`, `consent` or a field). */
export interface SignState { values: Partial<Record<FormField, string>>, ticked: number[], errors: Partial<Record<FormField | 'form' | 'consent', string>> }

const paragraphs = (text: string): string =>
  text.split(/\n\s*\n/).map(p => p.trim()).filter(p => p !== '').map(p => `<p>${escapeHtml(p)}</p>`).join('')

/** A petition's signatures against its target, in words and as a bar. */
function tally (form: FormRecord): string {
  if (form.target === null) return ''
  const words = `${form.signatures.toLocaleString('en')} of ${form.target.toLocaleString('en')} signatures`
  return `<p class="count" id="tally">${words}</p><progress aria-labelledby="tally" max="${form.target}" value="${Math.min(form.signatures, form.target)}">${words}</progress>`
}

/** The form's public page (or its embedded copy), posting to `action`. */
export function formPage (form: FormRecord, action: string, token: string, state: SignState = { values: {}, ticked: [], errors: {} }): string {
  const errors = errorList([state.errors.form, ...form.fields.map(f => state.errors[f.field]), state.errors.consent])
  const fields = form.fields.map(({ field, required }) => {
    const input = FIELD_INPUTS[field]
    return textField(field, required ? input.label : `${input.label} (optional)`, input.type, input.autocomplete, input.max, required, state.values[field] ?? '', state.errors[field])
  }).join('')
  const boxes = form.consents.length === 0
    ? ''
    : '<fieldset><legend>Keeping in touch</legend>' + form.consents.map((box, i) =>
      `<div class="shift"><input type="checkbox" id="c-${i}" name="consent" value="${i}"${state.ticked.includes(i) ? ' checked' : ''}><label for="c-${i}">${escapeHtml(box.label)}</label></div>`).join('') + '</fieldset>'
  const button = form.target === null ? 'Send' : 'Sign'
  return page(form.title, `<h1>${escapeHtml(form.title)}</h1>${tally(form)}${paragraphs(form.text)}` +
    `<h2 id="sign">${form.target === null ? 'Your details' : 'Sign the petition'}</h2>${errors}` +
    `<form method="post" action="${escapeHtml(action)}" aria-labelledby="sign">${fields}${boxes}${formEnd(token, button)}`)
}

/** The answer to a signature: the same for a new address and a known one. */
export function thanksPage (form: FormRecord, askedEmail: boolean, emailed: boolean): string {
  const mail = askedEmail && emailed
    ? '<p>We have sent you an e-mail. To get campaign updates by e-mail, press the link in it; until then we send you none.</p>'
    : ''
  return page('Thank you', `<h1>Thank you</h1><p class="meta">${escapeHtml(form.title)}</p>${form.target === null ? '<p>We have your answer.</p>' : '<p>Your signature is counted.</p>'}${mail}`)
}

/** The consent link's page: what it confirms and a button (a GET changes nothing: mail scanners follow links). */
export function confirmConsentPage (form: FormRecord | undefined, action: string): string {
  const from = form === undefined ? '' : ` (asked on "${form.title}")`
  return page('Confirm e-mail updates', `<h1>Confirm e-mail updates</h1><p>Press the button to confirm that you want campaign updates at this e-mail address${escapeHtml(from)}.</p>` +
    `<form method="post" action="${escapeHtml(action)}"><button type="submit">Yes, e-mail me updates</button></form>`)
}
