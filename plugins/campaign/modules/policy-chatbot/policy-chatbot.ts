// The policy chatbot: policy-ingest adds a policy document to the knowledge base (tagged `policy`),
// policy-chat answers a question from the policy passages with citations in a conversation kept per
// user, and list-policy-sessions lists the caller's conversations or returns one with its turns.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, ConversationStore, historyLines, turnResource, type Conversation, type Turn, addressingPassages, findIssues, checkText, PageArgs, RecordStore, TextArg, type ModuleKit, answerSentences, citationLines, CONTEXT_TURNS } from '../../module-kit.js'
import { answeringSources, composeAnswer, lastSubject, NOT_FOUND_ANSWER, policyKb, policyPrompt, policyQueries, policySource, subjectOf, type PolicyTurnMeta } from './policy-answer.js'

const SessionId = Type.String({ minLength: 1, maxLength: 64, description: 'a session_id of policy-chat' })

const ChatArgs = Type.Object({
  session_id: Type.Optional(SessionId),
  message: TextArg('the question about the campaign\'s policies')
}, { additionalProperties: false })

const IngestArgs = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  text: TextArg('the policy document'),
  source: Type.Optional(Type.String({ maxLength: 480, description: 'where the document comes from (a file, a URL)' }))
}, { additionalProperties: false })

const ListArgs = Type.Object({
  session_id: Type.Optional(SessionId),
  ...PageArgs
}, { additionalProperties: false })

export function policyChatbotFunctions (kit: ModuleKit): ModuleFunction[] {
  const prompt = loadPrompt(import.meta.url, 'policy-chat')
  const chats = new ConversationStore<PolicyTurnMeta>(new RecordStore<Conversation<PolicyTurnMeta>>(kit.store, 'policy-conversations', kit.maxRecords), 'policy chat session')
  const policies = policyKb(kit.kb)
  return [
    moduleFunction({
      name: 'policy-ingest',
      args: IngestArgs,
      handler: async ({ title, text, source }) => {
        checkText('text', text)
        const engine = await kit.language()
        const document = await kit.kb.ingest(title, text, policySource(source))
        return {
          ...document,
          issues: findIssues(text).slice(0, 5).map(i => i.issue),
          key_phrases: engine.keyPhrases(text, 5).map(p => p.term),
          engine: engine.name
        }
      }
    }),
    moduleFunction({
      name: 'policy-chat',
      args: ChatArgs,
      handler: async ({ session_id: id, message }, { session }) => {
        checkText('message', message)
        const chat = await chats.open(id, session, message)
        const engine = await kit.language()
        const subject = lastSubject(chat.turns)
        const queries = policyQueries(message, subject)
        const sources = answeringSources(engine, addressingPassages(engine, policies, queries), queries)
        let answer = NOT_FOUND_ANSWER
        let method: PolicyTurnMeta['method'] = 'none'
        let producedBy = engine.name
        let quoted: ReturnType<typeof answerSentences> = []
        const generative = sources.length > 0 ? await generated(kit.generator, () => policyPrompt(prompt, message, sources, historyLines(chats.recent(chat, CONTEXT_TURNS)))) : undefined
        if (generative !== undefined) {
          answer = generative.text
          method = 'generative'
          producedBy = generative.engine
        } else if (sources.length > 0) {
          quoted = answerSentences(engine, sources, queries)
          answer = composeAnswer(quoted)
          method = 'extractive'
        }
        const cited = sources.filter(s => method === 'generative' || quoted.some(q => q.cite === s.cite))
        const lines = citationLines(cited)
        const now = new Date().toISOString()
        const resourceId = turnResource(chat, 2)
        const turns: Array<Turn<PolicyTurnMeta>> = [
          { role: 'user', text: message, at: now },
          { role: 'assistant', text: answer, at: now, sources: lines, engine: producedBy, resource_id: resourceId, meta: { found: sources.length > 0, method, ...(sources.length > 0 ? { subject: subjectOf(message, subject) } : {}) } }
        ]
        const stored = await chats.append(chat, turns)
        return {
          session_id: stored.session_id,
          title: stored.title,
          answer,
          found: sources.length > 0,
          answer_method: method,
          sentences: quoted,
          citations: cited,
          sources: lines,
          turn_count: stored.turn_count,
          resource_id: resourceId,
          engine: producedBy
        }
      }
    }),
    moduleFunction({
      name: 'list-policy-sessions',
      args: ListArgs,
      handler: async ({ session_id: id, limit, cursor }, { session }) => {
        const engine = await kit.language()
        if (id !== undefined) {
          const { owner: _owner, ...chat } = await chats.get(id, session)
          return { sessions: [chat], next_cursor: null, engine: engine.name }
        }
        const page = await chats.list(session, limit, cursor)
        return { sessions: page.items, next_cursor: page.next_cursor, engine: engine.name }
      }
    })
  ]
}
