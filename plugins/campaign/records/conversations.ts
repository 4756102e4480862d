// Conversations kept per user (the policy chatbot's chats, the coaching and debate sessions): turns
// stored in a module's own LMDB database, bounded, listed newest first for their owner only, and
// resumed by id; another user's session is answered like an unknown one (404).
import { NotFound } from '../../../kernel/index.js'
import type { SessionRecord } from '../sessions.js'
import { timeKey, type Page, type RecordStore } from '../modules/kit.js'

/** Recent turns given to the generative provider as context. */
export const CONTEXT_TURNS = 6

export interface Turn<M> {
  role: 'user' | 'assistant'
  text: string
  at: string
  /** Assistant turns: the citations they drew on, what wrote them, the id a rating names. */
  sources?: string[]
  engine?: string
  resource_id?: string
  /** What the module keeps about the turn (a mode, the question asked, the counter-point used…). */
  meta?: M
}

export interface Conversation<M> {
  session_id: string
  /** The owner: the IdP subject (`sub`), or the e-mail when the session has no subject. */
  owner: string
  email: string
  /** The first message, cut to TITLE_CHARS. */
  title: string
  topic: string
  created_at: string
  updated_at: string
  /** Turns ever added (the stored `turns` keep only the last MAX_TURNS). */
  turn_count: number
  turns: Array<Turn<M>>
}

export type ConversationSummary = Omit<Conversation<unknown>, 'turns' | 'owner'> & { last_message: string }

/** Turns a conversation keeps; older ones are dropped (their count stays in `turn_count`). */
export const MAX_TURNS = 100
/** Characters of the first message kept as the title. */
export const TITLE_CHARS = 80

const ownerOf = (session: SessionRecord | undefined): string => session?.sub !== undefined && session.sub !== '' ? session.sub : session?.email ?? ''

const titleOf = (text: string): string => {
  const plain = text.replace(/\s+/g, ' ').trim()
  return plain.length <= TITLE_CHARS ? plain : `${plain.slice(0, TITLE_CHARS - 1)}…`
}

export class ConversationStore<M> {
  readonly #store: RecordStore<Conversation<M>>
  /** Names the session in 404s: `no ${what} "…"`. */
  readonly #what: string

  constructor (store: RecordStore<Conversation<M>>, what: string) {
    this.#store = store
    this.#what = what
  }

  /** The caller's conversation `id`; 404 when it does not exist or belongs to someone else. */
  async get (id: string, session: SessionRecord | undefined): Promise<Conversation<M>> {
    const found = await this.#store.get(id)
    if (found === undefined || found.owner !== ownerOf(session)) throw new NotFound(`no ${this.#what} "${id}"`)
    return found
  }

  /** The conversation `id` of the caller to continue, or a new one (not stored until `append`). */
  async open (id: string | undefined, session: SessionRecord | undefined, firstMessage: string): Promise<Conversation<M>> {
    if (id !== undefined) return await this.get(id, session)
    const now = new Date()
    return {
      session_id: timeKey(now),
      owner: ownerOf(session),
      email: session?.email ?? '',
      title: titleOf(firstMessage),
      topic: '',
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      turn_count: 0,
      turns: []
    }
  }

  /** The last `count` turns. */
  recent (conversation: Conversation<M>, count: number): Array<Turn<M>> {
    return conversation.turns.slice(-count)
  }

  /** Add turns and store the conversation; the oldest turns beyond MAX_TURNS are dropped. */
  async append (conversation: Conversation<M>, turns: Array<Turn<M>>): Promise<Conversation<M>> {
    const updated: Conversation<M> = {
      ...conversation,
      updated_at: new Date().toISOString(),
      turn_count: conversation.turn_count + turns.length,
      turns: [...conversation.turns, ...turns].slice(-MAX_TURNS)
    }
    await this.#store.put(updated.session_id, updated)
    return updated
  }

  /** The caller's conversations, newest started first, without their turns. */
  async list (session: SessionRecord | undefined, limit: number, cursor?: string): Promise<Page<ConversationSummary>> {
    const owner = ownerOf(session)
    const page = await this.#store.page(limit, cursor, c => c.owner === owner)
    return {
      items: page.items.map(({ turns, owner: _owner, id: _id, ...summary }) => ({ ...summary, last_message: turns.at(-1)?.text.slice(0, 200) ?? '' })),
      next_cursor: page.next_cursor
    }
  }
}

/** The resource id of a conversation's turn (what `record-feedback` names): `<session_id>/<turn number>`. */
export const turnResource = (conversation: Pick<Conversation<unknown>, 'session_id' | 'turn_count'>, offset: number): string => `${conversation.session_id}/${conversation.turn_count + offset}`

/** Recent turns as prompt lines: "User: …" / "Assistant: …", each cut to `chars`. */
export function historyLines (turns: ReadonlyArray<Turn<unknown>>, chars = 600, names = { user: 'User', assistant: 'Assistant' }): string {
  if (turns.length === 0) return '(none: this is the first message)'
  return turns.map(t => `${names[t.role]}: ${t.text.length <= chars ? t.text : `${t.text.slice(0, chars - 1)}…`}`).join('\n')
}
