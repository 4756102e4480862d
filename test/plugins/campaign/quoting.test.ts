// What the writing modules quote from a document with headings and numbering abbreviations: campaign
// copy on every channel, a policy-chat answer, a canvass script and its replies, a counter-message and
// a meeting summary quote whole sentences of the document, never a heading, through the API.
import t from 'tap'
import { campaignApp } from '../../support/campaign.js'

const TITLE = 'Transit Plan for Riverside'
const HEADINGS = [TITLE, 'Night Service Expansion', 'Fares and Passes']
/** The document's sentences: what may be quoted. */
const SENTENCES = [
  'Under Sec. 4 of the plan, night buses will run on Route No. 5 from 2027.',
  'Prop. 12 funds the night buses with approx. 40 new drivers.',
  'Fares will be free for students and seniors under Art. 3 of the plan.',
  'A monthly pass will cost $20 for everyone else.'
]
const DOCUMENT = `${TITLE}\n\n${HEADINGS[1]}\n${SENTENCES[0]} ${SENTENCES[1]}\n\n## ${HEADINGS[2]}\n${SENTENCES[2]} ${SENTENCES[3]}`

/** The strings of a result that it writes, its sources (the passages as stored) and citation lines left out. */
function written (value: unknown, key = ''): string[] {
  if (['sources', 'citations', 'citation_lines', 'engine'].includes(key)) return []
  if (typeof value === 'string') return [value.replace(/\[\d+\] [^;\n]*, passage \d+/g, '')]
  if (Array.isArray(value)) return value.flatMap(v => written(v))
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => written(v, k))
  return []
}

/** The quoted sentences ("sentence [n]") of a text. */
const quotedIn = (text: string): string[] => [...text.matchAll(/([^.!?\n•:“”]*(?:[.!?](?! \[)[^.!?\n•:“”]*)*[.!?]) \[\d+\]/g)].map(m => m[1].trim())

t.test('no module quotes a heading or a broken sentence', async t => {
  const { call } = await campaignApp(t)
  await call('kb-ingest', { title: TITLE, text: DOCUMENT })
  await call('policy-ingest', { title: TITLE, text: DOCUMENT })

  const check = (what: string, result: unknown, quoted: string[]): void => {
    const texts = written(result)
    for (const heading of HEADINGS) t.notOk(texts.some(s => s.includes(heading)), `${what}: no heading "${heading}"`)
    t.ok(quoted.length > 0, `${what} quotes the document`)
    for (const q of quoted) t.ok(SENTENCES.some(s => q.endsWith(s)), `${what}: "${q}" is a whole sentence`)
  }

  for (const channel of ['sms', 'social', 'email', 'flyer', 'speech']) {
    const copy = await call<{ text: string, headline: string, sentences: Array<{ text: string }> }>('generate-copy', { topic: 'night buses and fares', channel, length: 'long' })
    check(`${channel} copy`, copy, [...copy.sentences.map(s => s.text), ...quotedIn(copy.text)])
  }
  const chat = await call<{ answer: string, found: boolean, sentences: Array<{ text: string }> }>('policy-chat', { message: 'When will night buses run?' })
  t.ok(chat.found)
  check('policy chat', chat, [...chat.sentences.map(s => s.text), ...quotedIn(chat.answer)])
  const script = await call<{ script: string, issues: Array<{ talking_points: Array<{ text: string }> }>, objections: Array<{ response: string }> }>('generate-script', { topic: 'night buses' })
  check('canvass script', script, [...script.issues.flatMap(i => i.talking_points.map(p => p.text)), ...script.objections.flatMap(o => quotedIn(o.response)), ...quotedIn(script.script)])
  const counter = await call<{ short: string, long: string }>('counter-messaging', { text: 'Night buses will never run on Route No. 5.' })
  check('counter-message', counter, [...quotedIn(counter.short), ...quotedIn(counter.long)])

  const notes = `Transit Committee Meeting\nAna: ${SENTENCES[1]}\nBen: ${SENTENCES[0]}\nAna: ${SENTENCES[2]}`
  const meeting = await call<{ summary: string, summary_sentences: Array<{ text: string }> }>('summarize-meeting', { title: 'Transit committee', text: notes })
  t.notMatch(meeting.summary, /Transit Committee Meeting/, 'the meeting\'s title line is no summary sentence')
  t.ok(meeting.summary_sentences.length > 0 && meeting.summary_sentences.every(s => SENTENCES.includes(s.text)), `summary sentences whole: ${JSON.stringify(meeting.summary_sentences.map(s => s.text))}`)
})
