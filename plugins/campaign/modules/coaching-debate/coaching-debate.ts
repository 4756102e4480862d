// Coaching and debate: coaching-exchange either plays the candidate's opponent (debate: the strongest
// counter-point in the knowledge base and a follow-up question) or coaches an answer (coaching: rule-
// based measurements and a cited fact); sessions kept per user and resumable, like the policy chats.
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type LanguageEngine, generated, labelledSections, loadPrompt, promptMessages, ConversationStore, historyLines, turnResource, type Conversation, type Turn, addressingPassages, MAX_SOURCES, type CitedSource, checkText, RecordStore, TextArg, type ModuleKit, citationLines, sourceLines, CONTEXT_TURNS } from '../../module-kit.js'
import { coachAnswer, type CoachingFeedback } from './coaching-feedback.js'
import { counterPoint, focusOf, followUp, opponentText, type CounterPoint, type QuestionKind } from './debate-opponent.js'


export type CoachingMode = 'debate' | 'coaching'

/** What a turn of a coaching session keeps: its mode, the opponent's question, the counter-point quoted. */
export interface CoachingTurnMeta { mode: CoachingMode, question?: string, counter?: string }

const ExchangeArgs = Type.Object({
  session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a session_id of coaching-exchange' })),
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'the debate topic or the question answered' })),
  message: TextArg('the candidate\'s answer or statement'),
  mode: Type.Union([Type.Literal('debate'), Type.Literal('coaching')])
}, { additionalProperties: false })

const ROLE_NAMES = { user: 'Candidate', assistant: 'Opponent or coach' }
/** Turns returned with each exchange, so that a resumed session can be shown. */
const RETURNED_TURNS = 10

type Cited = Pick<CitedSource, 'cite' | 'document_id' | 'title' | 'source' | 'passage' | 'text'>

/** The rule-based measurements, one per line, for the coaching prompt. */
function measurementLines (f: CoachingFeedback): string {
  return [
    `Length: ${f.length.words} words, about ${f.length.seconds} s at 150 words a minute (${f.length.verdict})`,
    `Hedges: ${f.hedges.count}${f.hedges.found.length > 0 ? ` (${f.hedges.found.join(', ')})` : ''}${f.hedges.flagged ? ', flagged' : ''}`,
    `Filler words: ${f.fillers.count}${f.fillers.found.length > 0 ? ` (${f.fillers.found.join(', ')})` : ''}${f.fillers.flagged ? ', flagged' : ''}`,
    `Tone: ${f.tone.label} (polarity ${f.tone.polarity})${f.tone.flagged ? ', mostly attack' : ''}`,
    f.key_terms === null ? 'Key terms: no question given' : `Key terms of the question used: ${f.key_terms.used.join(', ') || 'none'}; missing: ${f.key_terms.missing.join(', ') || 'none'}`,
    `Score: ${f.score}/100`
  ].join('\n')
}

/** The local coach's reply: the score and the tips. */
const coachReply = (f: CoachingFeedback): string => f.tips.length === 0 ? `Score ${f.score}/100: clear, on point and direct.` : `Score ${f.score}/100. ${f.tips.join(' ')}`

/** The passages given to the opponent's prompt: the counter-point's first, then others that address the statement. */
function debateSources (engine: LanguageEngine, kit: ModuleKit, query: string, counter: CounterPoint | undefined): Cited[] {
  const others = addressingPassages(engine, kit.kb, [query]).filter(s => counter === undefined || s.document_id !== counter.document_id || s.passage !== counter.passage)
  return [...(counter !== undefined ? [counter] : []), ...others].slice(0, MAX_SOURCES).map((s, i) => ({ cite: i + 1, document_id: s.document_id, title: s.title, source: s.source, passage: s.passage, text: s.text }))
}

export function coachingDebateFunctions (kit: ModuleKit): ModuleFunction[] {
  const prompts = { debate: loadPrompt(import.meta.url, 'coaching-exchange-debate'), coaching: loadPrompt(import.meta.url, 'coaching-exchange-coaching') }
  const sessions = new ConversationStore<CoachingTurnMeta>(new RecordStore<Conversation<CoachingTurnMeta>>(kit.store, 'coaching-conversations', kit.maxRecords), 'coaching session')
  return [
    moduleFunction({
      name: 'coaching-exchange',
      args: ExchangeArgs,
      handler: async ({ session_id: id, topic, message, mode }, { session }) => {
        checkText('message', message)
        const opened = await sessions.open(id, session, message)
        const conversation = { ...opened, topic: topic ?? opened.topic }
        const engine = await kit.language()
        const recent = sessions.recent(conversation, CONTEXT_TURNS)
        const history = historyLines(recent, 600, ROLE_NAMES)
        const lastQuestion = conversation.turns.findLast(t => t.meta?.question !== undefined)?.meta?.question
        let reply: string
        let cited: Cited[] = []
        let producedBy = engine.name
        let debate: { counter_point: CounterPoint | null, rebuttal: string, question: string, question_kind: QuestionKind | 'generated', note: string } | undefined
        let coaching: CoachingFeedback | undefined
        const meta: CoachingTurnMeta = { mode }

        if (mode === 'debate') {
          const query = [conversation.topic, lastQuestion ?? '', message].filter(s => s !== '').join(' ')
          const used = new Set(conversation.turns.flatMap(t => t.meta?.counter ?? []))
          const counter = counterPoint(engine, kit.kb, query, message, used)
          const focus = focusOf(engine, message, conversation.topic)
          const asked = followUp(message, counter?.sentence, focus)
          const note = counter === undefined ? 'The knowledge base holds no statement opposing this: the question is a challenge built from your statement alone. Add opponent statements or critical coverage to the knowledge base (kb-ingest) for rebuttals from the record.' : ''
          const sent = kit.generator === undefined ? [] : debateSources(engine, kit, query, counter)
          const answer = await generated(kit.generator, () => promptMessages(prompts.debate, {
            topic: conversation.topic === '' ? 'not given' : conversation.topic, history, message: message.trim(), sources: sent.length === 0 ? 'none found' : sourceLines(sent)
          }))
          if (answer !== undefined) {
            cited = sent
            const sections = labelledSections(answer.text, ['REBUTTAL', 'QUESTION'])
            debate = { counter_point: counter ?? null, rebuttal: sections?.REBUTTAL ?? answer.text, question: sections?.QUESTION ?? '', question_kind: 'generated', note }
            producedBy = answer.engine
          } else {
            cited = counter !== undefined ? [counter] : []
            debate = { counter_point: counter ?? null, rebuttal: counter === undefined ? '' : `${counter.sentence} [1]`, question: asked.question, question_kind: asked.kind, note }
          }
          reply = answer !== undefined ? `${debate.rebuttal} ${debate.question}`.trim() : opponentText(counter, asked.question)
          if (debate.question !== '') meta.question = debate.question
          if (counter !== undefined) meta.counter = counter.sentence
        } else {
          const question = topic ?? lastQuestion ?? conversation.topic
          const feedback = coachAnswer(engine, kit.kb, message, question)
          coaching = feedback
          const fact = feedback.fact
          cited = fact === null ? [] : [{ cite: 1, document_id: fact.document_id, title: fact.title, source: fact.source, passage: fact.passage, text: fact.sentence }]
          const answer = await generated(kit.generator, () => promptMessages(prompts.coaching, {
            question: question === '' ? 'not given' : question, history, message: message.trim(), measurements: measurementLines(feedback), sources: cited.length === 0 ? 'none found' : sourceLines(cited)
          }))
          reply = answer?.text ?? coachReply(feedback)
          producedBy = answer?.engine ?? producedBy
        }

        const lines = citationLines(cited)
        const now = new Date().toISOString()
        const resourceId = turnResource(conversation, 2)
        const turns: Array<Turn<CoachingTurnMeta>> = [
          { role: 'user', text: message, at: now, meta: { mode } },
          { role: 'assistant', text: reply, at: now, sources: lines, engine: producedBy, resource_id: resourceId, meta }
        ]
        const stored = await sessions.append(conversation, turns)
        return {
          session_id: stored.session_id,
          mode,
          topic: stored.topic,
          reply,
          ...(debate !== undefined ? { debate } : {}),
          ...(coaching !== undefined ? { coaching } : {}),
          citations: cited,
          sources: lines,
          turns: stored.turns.slice(-RETURNED_TURNS).map(t => ({ role: t.role, text: t.text, at: t.at, mode: t.meta?.mode ?? mode })),
          turn_count: stored.turn_count,
          resource_id: resourceId,
          engine: producedBy
        }
      }
    })
  ]
}
