// The sending module's server functions: send an e-mail or an SMS to chosen people or a saved list
// (through the Messenger: consent, suppression, merge fields, unsubscribe links, the send log), preview
// what the first recipient would get, read the send log (each role through SEND_LOG_VIEW), keep the
// suppression list, and read the replies to texts (through SMS_REPLY_VIEW).
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, PageArgs, checkText } from '../../module-kit.js'
import type { PeopleDirectory, Person } from '../people/index.js'
import { SEND_LOG_VIEW, type Messenger, type Outgoing } from './messenger.js'
import { SMS_REPLY_VIEW, type SmsReplies } from './sms-replies.js'

/** Most people one send names by id. */
export const MAX_RECIPIENT_IDS = 10_000
/** Longest e-mail body, in characters. */
export const MAX_EMAIL_CHARS = 100_000
/** Longest SMS body, in characters (ten 160-character segments). */
export const MAX_SMS_CHARS = 1600

const Id = Type.String({ minLength: 1, maxLength: 64 })
const Recipients = {
  person_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: MAX_RECIPIENT_IDS, description: 'the people to send to' })),
  list_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a saved list: its members now' }))
}
const Subject = Type.String({ minLength: 1, maxLength: 300, description: 'merge fields allowed' })
const Purpose = Type.String({ minLength: 1, maxLength: 64, default: 'message', description: 'why it is sent, kept in the send log' })
const EmailBody = Type.String({ minLength: 1, description: 'plain text; merge fields allowed' })
const SmsBody = Type.String({ minLength: 1, maxLength: MAX_SMS_CHARS, description: 'merge fields allowed' })
const Address = Type.String({ minLength: 3, maxLength: 254, description: 'an e-mail address or a phone number' })

/** The people a send names: by id (unknown ids reported apart) or a saved list's members. */
async function recipientsOf (people: PeopleDirectory, args: { person_ids?: string[], list_id?: string }): Promise<{ recipients: Person[], unknown: string[] }> {
  if ((args.person_ids === undefined) === (args.list_id === undefined)) throw new BadRequest('invalid arguments: give person_ids or list_id (one of them)')
  if (args.list_id !== undefined) return { recipients: await people.members(args.list_id), unknown: [] }
  const recipients: Person[] = []
  const unknown: string[] = []
  for (const id of new Set(args.person_ids)) {
    const person = await people.get(id)
    if (person === undefined) unknown.push(id)
    else recipients.push(person)
  }
  return { recipients, unknown }
}

export interface SendingSources { people: PeopleDirectory, messenger: Messenger, replies: SmsReplies }

export function sendingFunctions ({ people, messenger, replies }: SendingSources): ModuleFunction[] {
  const send = async (message: Outgoing, args: { person_ids?: string[], list_id?: string }, by: string): Promise<unknown> => {
    messenger.check(message)
    const { recipients, unknown } = await recipientsOf(people, args)
    return await messenger.send(message, recipients, by, { unknown })
  }
  return [
    moduleFunction({
      name: 'send-email',
      args: Type.Object({ ...Recipients, subject: Subject, body: EmailBody, purpose: Purpose }, { additionalProperties: false }),
      handler: async ({ subject, body, purpose, ...to }, { session }) => {
        checkText('body', body, MAX_EMAIL_CHARS)
        return await send({ channel: 'email', subject, body, purpose }, to, session?.email ?? '')
      }
    }),
    moduleFunction({
      name: 'send-sms',
      args: Type.Object({ ...Recipients, body: SmsBody, purpose: Purpose }, { additionalProperties: false }),
      handler: async ({ body, purpose, ...to }, { session }) => await send({ channel: 'sms', body, purpose }, to, session?.email ?? '')
    }),
    moduleFunction({
      name: 'preview-send',
      args: Type.Object({
        ...Recipients,
        channel: Type.Union([Type.Literal('email'), Type.Literal('sms')]),
        subject: Type.Optional(Type.String({ maxLength: 300 })),
        body: Type.String({ minLength: 1 })
      }, { additionalProperties: false }),
      handler: async ({ channel, subject, body, ...to }) => {
        checkText('body', body, channel === 'email' ? MAX_EMAIL_CHARS : MAX_SMS_CHARS)
        const message: Outgoing = { channel, subject, body, purpose: 'preview' }
        messenger.checkMerge(message)
        const { recipients, unknown } = await recipientsOf(people, to)
        const { ready, skipped } = await messenger.sortRecipients(message, recipients)
        const first = ready[0]
        return {
          enabled: messenger.enabled(channel),
          recipients: recipients.length + unknown.length,
          will_send: ready.length,
          skipped: [...unknown.map(id => ({ person_id: id, reason: 'no such person' })), ...skipped],
          first: first === undefined ? null : { person_id: first.person_id, name: first.name, ...await messenger.preview(message, first) }
        }
      }
    }),
    moduleFunction({
      name: 'list-send-log',
      args: Type.Object({ send_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), person_id: Type.Optional(Id), ...PageArgs }, { additionalProperties: false }),
      handler: async ({ send_id: sendId, person_id: personId, limit, cursor }, { session }) => {
        SEND_LOG_VIEW.refuseUnseen(session?.role, 'filter list-send-log', { send_id: sendId, person_id: personId }, { send_id: ['send_id'], person_id: ['person_id'] })
        const page = await messenger.logPage(limit, cursor, { send_id: sendId, person_id: personId })
        return { items: page.items.map(entry => SEND_LOG_VIEW.show(entry, session?.role)), next_cursor: page.next_cursor }
      }
    }),
    moduleFunction({
      name: 'list-sms-replies',
      args: Type.Object({
        person_id: Type.Optional(Id),
        keyword: Type.Optional(Type.Union([Type.Literal('stop'), Type.Literal('start'), Type.Literal('help'), Type.Literal('none')], { description: 'none: the replies that are no keyword' })),
        ...PageArgs
      }, { additionalProperties: false }),
      handler: async ({ person_id: personId, keyword, limit, cursor }, { session }) => {
        SMS_REPLY_VIEW.refuseUnseen(session?.role, 'filter list-sms-replies', { person_id: personId, keyword }, { person_id: ['person_id'], keyword: ['keyword'] })
        const page = await replies.page(limit, cursor, { person_id: personId, keyword })
        return { receiving: replies.enabled, items: page.items.map(reply => SMS_REPLY_VIEW.show(reply, session?.role)), next_cursor: page.next_cursor }
      }
    }),
    moduleFunction({
      name: 'list-suppressions',
      args: Type.Object({}, { additionalProperties: false }),
      handler: async () => ({ suppressions: await messenger.suppressions() })
    }),
    moduleFunction({
      name: 'add-suppression',
      args: Type.Object({ address: Address, reason: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      handler: async ({ address, reason }, { session }) => await messenger.suppress(address, reason, session?.email ?? '')
    }),
    moduleFunction({
      name: 'remove-suppression',
      args: Type.Object({ address: Address }, { additionalProperties: false }),
      handler: async ({ address }) => ({ removed: await messenger.unsuppress(address) })
    })
  ]
}
