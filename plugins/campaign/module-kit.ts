// The campaign core's published module kit: the one file of the core that a module's server code
// (its functions, methods, services and routes) imports, besides the manifest's types and audiences
// (modules/manifest.ts, which both bundles read); a module's page imports ui/src/module-kit.ts
// instead. It is the contract for module authors: what is re-exported here may be relied on, anything
// else of the core may change without a module noticing. Nothing in the core imports this file. A
// module providing a service to other modules adds it to `ModuleKit` here (`declare module
// '../../module-kit.js'` beside the service's class); the dependency-cruiser rule
// `campaign-module-through-the-kit` refuses any other way into the core.

// Server functions, roles, sessions and API tokens: declaring a function and who may call it.
export { type Caller, type FunctionRegistry, moduleFunction, type ModuleFunction, serverFunction, type ServerFunction, SHARED_MODULE } from './functions.js'
export { mayCall, type Role, ROLES } from './roles.js'
export { CAMPAIGN_CODES } from './errors.js'
export { type ApiTokens, TOKEN_SUBJECT } from './api-tokens.js'
export type { SessionRecord } from './sessions.js'
export type { SessionAuth } from './session-auth.js'
export type { CampaignConfig } from './settings.js'

// The campaign store, the audit log, who sees what of a person, files staff edit.
export { actingAs, type AuditLog } from './audit.js'
export { hideAttribution, PeopleView, type ViewField } from './people.js'
export type { Alongside, CampaignStore, Table, Transaction } from './store/contract.js'
export { keptKey } from './store/kept-key.js'
export { loadDataFile } from './data-files.js'

// What every module receives and shares: the kit, text bounds, time-ordered record stores, pagination.
export { calendarDay, checkText, contentId, DayArg, instant, type ModuleKit, PageArgs, RecordStore, TextArg, timeKey, timePrefix, timeRange, TimeRangeArgs } from './modules/kit.js'

// The language engine, the generative provider, prompts and wording.
export type { Entities, LanguageEngine, LanguageGuess, RankedTerm, Sentiment, SummarySentence } from './language/engine.js'
export { localEngine } from './language/local-engine.js'
export { type ChatMessage, generated } from './language/generator.js'
export type { SecretResolver } from './language/generator-settings.js'
export { fillTemplate, labelledSections, loadPrompt, promptMessages, type PromptTemplate } from './language/prompts.js'
export { loadTemplates } from './language/templates.js'
export { cosine, mean, polarityOf, round, standardDeviation, termCounts } from './language/text-stats.js'
export { isNegator, opensWithContrast, turnsFromPrevious } from './language/opinion.js'

// Citing the knowledge base: retrieval, citations, counter-messages, source lists.
export { type AnswerSentence, answerSentences, citationLines, Citations, type CitedPassage, clip, type GroundedSentence, groundedSentences, type KbLike, marked, nothingInKb, resourceHash, sourceLines } from './grounding/grounding.js'
export { SourceList } from './grounding/source-list.js'
export { addressingPassages, answeringPassages, type CitedSource, composeExtractive, counterPrompt, type CounterTone, MAX_SOURCES, quoteClaim, readGenerated, RELEVANT } from './grounding/counter-message.js'
export { COUNTER_TONES } from './grounding/counter-tones.js'

// General text tools: word cues, BM25, claims, stances, legal provisions, issues, transcripts, due dates.
export { distinctCi, escapeRegExp, FUNCTION_WORDS, matchesOf, mentions, plural, polarityLabel, words } from './text/text-cues.js'
export { Bm25Index, tokenize } from './text/bm25.js'
export { type Contradiction, contradicts, foldedTerms, negatedTerms } from './text/claims.js'
export { analyseClauses, type Clause, evidence, foldTerm, opinionPolarity, type Position, positionOf, type Speaker, splitClauses, stanceSign, stanceTable, type StanceTable } from './text/stance.js'
export { AMOUNT, classifyClause, type Clause as LegalClause, type Provision, type ProvisionKind, type Section, SECTION_LINE, splitClauses as splitLegalClauses, splitSections } from './text/provisions.js'
export { cueMatcher, findIssues, ISSUE_LEXICON, type IssueMention } from './text/issue-lexicon.js'
export { parseTurns, speakersOf, type Turn as TranscriptTurn } from './text/transcript.js'
export { findDue, shiftDay } from './text/due-dates.js'

// The records modules read from each other: the post stream, its counts and series, conversations.
export type { Post, PostStore } from './records/posts.js'
export { type Label, LABELS, type Mood, type Tally } from './records/post-buckets.js'
export { bucketPosts, bucketStart, type BucketStats } from './records/hourly.js'
export { checkSpeakers, postActors, postRange, RangeArgs, SpeakersArg } from './records/stance-args.js'
export { CONTEXT_TURNS, type Conversation, ConversationStore, historyLines, type Turn, turnResource } from './records/conversations.js'
