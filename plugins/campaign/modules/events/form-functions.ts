// The server functions of the public forms and petitions: staff make or change a form (save-form:
// its fields, consent boxes, target and whether it is published at /f/{slug}); staff and readonly list
// them with their signatures (list-forms); staff read a form's signatures with each signer's e-mail
// consent (form-signatures: not asked, pending or confirmed); and every public page's views, sign-ups and conversion
// (public-page-stats: event pages and forms).
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction } from '../../module-kit.js'
import type { PageStats } from './page-views.js'
import { FORM_FIELDS, type FormRecord, type PublicForms } from './public-forms.js'

const SaveArgs = Type.Object({
  form_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the form to change' })),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  text: Type.String({ maxLength: 5000, default: '', description: 'shown above the form; blank lines part paragraphs' }),
  fields: Type.Array(Type.Object({
    field: Type.Union(FORM_FIELDS.map(f => Type.Literal(f))),
    required: Type.Boolean({ default: false })
  }, { additionalProperties: false }), { maxItems: FORM_FIELDS.length, default: [], description: 'the fields asked, shown in a fixed order; the e-mail address is always asked and required' }),
  consents: Type.Array(Type.Object({
    label: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Boolean({ default: false, description: 'the box asks consent to campaign e-mail, given once the person presses the link sent to them' })
  }, { additionalProperties: false }), { maxItems: 5, default: [] }),
  target: Type.Union([Type.Integer({ minimum: 1, maximum: 100_000_000 }), Type.Null()], { default: null, description: 'a petition\'s target of signatures, shown with the count' }),
  published: Type.Boolean({ default: false, description: 'true: everyone may see and sign it at /f/{slug}' })
}, { additionalProperties: false })

const shown = (form: FormRecord): FormRecord & { path: string } => ({ ...form, path: `/f/${form.slug}` })

export function formFunctions (forms: PublicForms, pageStats: () => Promise<PageStats[]>): ModuleFunction[] {
  return [
    moduleFunction({
      name: 'save-form',
      args: SaveArgs,
      handler: async (args, caller) => shown(await forms.save(args, caller.session?.email ?? ''))
    }),
    moduleFunction({
      name: 'list-forms',
      args: Type.Object({}, { additionalProperties: false }),
      handler: async () => ({ forms: (await forms.forms()).map(shown) })
    }),
    moduleFunction({
      name: 'form-signatures',
      args: Type.Object({ form_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      handler: async ({ form_id: id }) => {
        const { form, signatures } = await forms.signaturesOf(id)
        return { form: shown(form), signatures }
      }
    }),
    moduleFunction({
      name: 'public-page-stats',
      args: Type.Object({}, { additionalProperties: false }),
      handler: async () => ({ pages: await pageStats() })
    })
  ]
}
