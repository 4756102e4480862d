// Public forms and petitions: staff make a form (its title and text, the fields it asks from a fixed
// set, consent boxes, an optional target of signatures, published or not) shown to everyone at
// /f/{slug} (form-routes.ts). Each signature is matched to a person by e-mail address or makes one: a
// new person gets the name, phone and postcode given; an existing person's record is left as it was
// but for its activity time (so the signature shows in their history). A person signs a form once
// (signing again counts nothing more). A box asking consent to campaign e-mail changes nothing at
// first: the consent is pending until the person presses the signed link sent to that address (double
// opt-in); then their e-mail consent is given and a consent record keeps when and from which form.
import { randomUUID } from 'node:crypto'
import { Conflict, NotFound } from '../../../../kernel/index.js'
import { actingAs, type CampaignStore } from '../../module-kit.js'
import type { Person } from '../people/index.js'
import { type EventPeople, plain, type ReminderMessenger, slugOf } from './event-book.js'
import type { PublicTokens } from './public-tokens.js'

const FORMS = 'public-forms'
const SIGNATURES = 'form-signatures'
/** Who signed which form once: `{form_id}:{person_id}` → signature_id. */
const SIGNERS = 'form-signers'
/** A person's consent given through a public form: `{person_id}:email` → ConsentRecord. */
const CONSENTS = 'consent-records'
/** Who the audit log names as having written a signature or its consent. */
export const PUBLIC_FORM = 'public form'

/** The fields a form may ask, in the order they are shown. */
export const FORM_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'postcode', 'comment'] as const
export type FormField = typeof FORM_FIELDS[number]

export interface ConsentBox {
  /** What the box says, e.g. "E-mail me campaign updates". */
  label: string
  /** Ticking it asks consent to campaign e-mail, given once the link sent is pressed. */
  email: boolean
}

export interface FormRecord {
  form_id: string
  title: string
  text: string
  /** The fields asked, each required or optional; the e-mail address is always asked and required. */
  fields: Array<{ field: FormField, required: boolean }>
  consents: ConsentBox[]
  /** A petition's target of signatures, or null. */
  target: number | null
  published: boolean
  slug: string
  /** People who signed (each once). */
  signatures: number
  created_by: string
  created_at: string
  updated_at: string
}

export type EmailConsent = 'not asked' | 'pending' | 'confirmed'

export interface SignatureRecord {
  signature_id: string
  form_id: string
  person_id: string
  /** As the visitor gave them. */
  values: Partial<Record<FormField, string>>
  /** The labels of the consent boxes ticked, as they read when signed. */
  consents: string[]
  email_consent: EmailConsent
  at: string
  confirmed_at: string | null
}

export interface ConsentRecord { person_id: string, channel: 'email', given_at: string, source: string, signature_id: string }

/** What a visitor sent, checked (form-routes.ts): the values and the indexes of the boxes ticked. */
export interface SignatureForm { values: Partial<Record<FormField, string>> & { email: string }, ticked: number[] }

export type FormFields = Pick<FormRecord, 'title' | 'text' | 'fields' | 'consents' | 'target' | 'published'> & { form_id?: string }

export interface PublicFormOptions {
  people: EventPeople
  messenger: () => ReminderMessenger | undefined
  /** The public base URL of the confirmation link. */
  appUrl: () => string
  /** A confirmation e-mail that could not be sent (the signature stands). */
  failed: (err: unknown) => void
  /** A confirmation being sent, for the server to wait for when it stops. */
  track: (sending: Promise<void>) => void
}

export type ConfirmResult = { status: 'confirmed' | 'already', form: FormRecord | undefined } | { status: 'gone' }

export class PublicForms {
  readonly #store: CampaignStore
  readonly #tokens: PublicTokens
  readonly #options: PublicFormOptions

  constructor (store: CampaignStore, tokens: PublicTokens, options: PublicFormOptions) {
    this.#store = store
    this.#tokens = tokens
    this.#options = options
  }

  get emailOn (): boolean {
    return this.#options.messenger()?.enabled?.('email') === true
  }

  /** Make a form or change one (its slug and signatures stay). */
  async save (fields: FormFields, by: string, now = new Date()): Promise<FormRecord> {
    const id = fields.form_id ?? randomUUID()
    return await this.#store.transaction(`form:${id}`, async tx => {
      const table = tx.table<FormRecord>(FORMS)
      const before = await table.get(id)
      if (fields.form_id !== undefined && before === undefined) throw new NotFound(`no form "${id}"`)
      const asked = fields.fields.filter(f => f.field !== 'email')
      const stamp = now.toISOString()
      const form: FormRecord = {
        form_id: id,
        title: fields.title,
        text: fields.text,
        fields: FORM_FIELDS.flatMap(name => name === 'email' ? [{ field: 'email' as const, required: true }] : asked.filter(f => f.field === name).slice(0, 1)),
        consents: fields.consents,
        target: fields.target,
        published: fields.published,
        slug: before?.slug ?? slugOf({ title: fields.title, event_id: id }),
        signatures: before?.signatures ?? 0,
        created_by: before?.created_by ?? by,
        created_at: before?.created_at ?? stamp,
        updated_at: stamp
      }
      await table.put(id, form)
      return form
    })
  }

  async forms (): Promise<FormRecord[]> {
    return (await this.#store.table<FormRecord>(FORMS).list()).map(({ value }) => value)
  }

  /** The published form a public page names by its slug or id; undefined for any other. */
  async published (ref: string): Promise<FormRecord | undefined> {
    const form = await this.#store.table<FormRecord>(FORMS).get(ref) ?? (await this.forms()).find(f => f.slug === ref)
    return form?.published === true ? form : undefined
  }

  /** Take a signature; the e-mail asking to confirm a consent to e-mail goes out in the background. */
  async sign (form: FormRecord, sent: SignatureForm, now = new Date()): Promise<SignatureRecord> {
    const asksEmail = sent.ticked.some(i => form.consents[i]?.email === true)
    const signature = await actingAs({ by: PUBLIC_FORM, role: 'system', action: 'public-sign' }, async () => {
      const person = await this.#person(sent, now)
      return await this.#store.transaction(`form:${form.form_id}`, async tx => {
        const signers = tx.table<string>(SIGNERS)
        const signatures = tx.table<SignatureRecord>(SIGNATURES)
        const key = `${form.form_id}:${person}`
        const signedId = await signers.get(key)
        const signed = signedId === undefined ? undefined : await signatures.get(signedId)
        if (signed !== undefined) {
          // Signed before: nothing more is counted; a consent to e-mail asked now is pending unless given already.
          if (!asksEmail || signed.email_consent !== 'not asked') return signed
          const pending: SignatureRecord = { ...signed, email_consent: 'pending' }
          await signatures.put(signed.signature_id, pending)
          return pending
        }
        const record: SignatureRecord = {
          signature_id: randomUUID(),
          form_id: form.form_id,
          person_id: person,
          values: sent.values,
          consents: sent.ticked.map(i => form.consents[i].label),
          email_consent: asksEmail ? 'pending' : 'not asked',
          at: now.toISOString(),
          confirmed_at: null
        }
        await signatures.put(record.signature_id, record)
        await signers.put(key, record.signature_id)
        const forms = tx.table<FormRecord>(FORMS)
        const kept = await forms.get(form.form_id)
        if (kept !== undefined) await forms.put(form.form_id, { ...kept, signatures: kept.signatures + 1 })
        return record
      })
    })
    if (asksEmail && signature.email_consent === 'pending') this.#options.track(this.#askToConfirm(form, signature).catch(this.#options.failed))
    return signature
  }

  /** A form's signatures, oldest first; 404 when there is no such form. */
  async signaturesOf (formId: string): Promise<{ form: FormRecord, signatures: SignatureRecord[] }> {
    const form = await this.#store.table<FormRecord>(FORMS).get(formId)
    if (form === undefined) throw new NotFound(`no form "${formId}"`)
    const signatures = (await this.#store.table<SignatureRecord>(SIGNATURES).list()).map(({ value }) => value).filter(s => s.form_id === formId)
    return { form, signatures: signatures.sort((a, b) => a.at.localeCompare(b.at)) }
  }

  async signature (signatureId: string): Promise<SignatureRecord | undefined> {
    return await this.#store.table<SignatureRecord>(SIGNATURES).get(signatureId)
  }

  async formOf (signature: SignatureRecord): Promise<FormRecord | undefined> {
    return await this.#store.table<FormRecord>(FORMS).get(signature.form_id)
  }

  async consentRecord (personId: string): Promise<ConsentRecord | undefined> {
    return await this.#store.table<ConsentRecord>(CONSENTS).get(`${personId}:email`)
  }

  /** The person pressed the link: their e-mail consent is given, with when and from which form. */
  async confirm (signatureId: string, now = new Date()): Promise<ConfirmResult> {
    return await actingAs({ by: PUBLIC_FORM, role: 'system', action: 'confirm-email-consent' }, async () => {
      const signature = await this.signature(signatureId)
      const person = signature === undefined ? undefined : await this.#options.people.get(signature.person_id)
      if (signature === undefined || person === undefined) return { status: 'gone' }
      const form = await this.formOf(signature)
      if (signature.email_consent === 'confirmed') return { status: 'already', form }
      if (!person.consent.email) await this.#options.people.save({ person_id: person.person_id, name: person.name, consent: { email: true } }, PUBLIC_FORM)
      return await this.#store.transaction(`${SIGNATURES}:${signatureId}`, async tx => {
        const signatures = tx.table<SignatureRecord>(SIGNATURES)
        const kept = await signatures.get(signatureId) as SignatureRecord
        if (kept.email_consent === 'confirmed') return { status: 'already', form }
        const at = now.toISOString()
        await signatures.put(signatureId, { ...kept, email_consent: 'confirmed', confirmed_at: at })
        const record: ConsentRecord = { person_id: person.person_id, channel: 'email', given_at: at, source: `public form /f/${form?.slug ?? signature.form_id}`, signature_id: signatureId }
        await tx.table<ConsentRecord>(CONSENTS).put(`${person.person_id}:email`, record)
        return { status: 'confirmed', form }
      })
    })
  }

  async confirmUrl (signatureId: string): Promise<string> {
    const url = new URL('/consent/confirm', this.#options.appUrl())
    url.searchParams.set('t', await this.#tokens.linkToken('consent', signatureId))
    return url.href
  }

  /** The person with the e-mail address; a new one gets the name, phone and postcode given (a phone another person holds is left out). */
  async #person (sent: SignatureForm, now: Date): Promise<string> {
    const people = this.#options.people
    const { email, first_name: first = '', last_name: last = '', phone = '', postcode = '' } = sent.values
    const existing = await people.byEmail(email)
    if (existing !== undefined) {
      await people.noteActivity(existing.person_id, now.toISOString())
      return existing.person_id
    }
    const name = `${first} ${last}`.trim()
    const person = await people.ensure({ name: name === '' ? email : name, email }, undefined, PUBLIC_FORM)
    if ((phone !== '' && person.phone === '') || (postcode !== '' && person.postcode === '')) {
      try {
        await people.save({ person_id: person.person_id, name: person.name, ...(phone !== '' ? { phone } : {}), ...(postcode !== '' ? { postcode } : {}) }, PUBLIC_FORM)
      } catch (err) {
        if (!(err instanceof Conflict)) throw err
        if (postcode !== '') await people.save({ person_id: person.person_id, name: person.name, postcode }, PUBLIC_FORM)
      }
    }
    await people.noteActivity(person.person_id, now.toISOString())
    return person.person_id
  }

  async #askToConfirm (form: FormRecord, signature: SignatureRecord): Promise<void> {
    const messenger = this.#options.messenger()
    if (messenger === undefined || messenger.enabled?.('email') === false) return
    const person: Person | undefined = await this.#options.people.get(signature.person_id)
    if (person === undefined) return
    const body = [
      'Hello {{first_name}},',
      '',
      `Thank you for signing "${plain(form.title)}".`,
      '',
      'You asked to get campaign updates by e-mail. Please confirm that this address is yours and that you want them; until you do, we send you none:',
      '',
      await this.confirmUrl(signature.signature_id),
      '',
      'If you did not ask for this, ignore this message and nothing changes.'
    ].join('\n')
    await messenger.send({ channel: 'email', purpose: 'consent-confirmation', transactional: true, subject: 'Please confirm: campaign updates by e-mail', body }, [person], PUBLIC_FORM)
  }
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** The public forms and petitions with their signatures. */
    forms: PublicForms
  }
}
