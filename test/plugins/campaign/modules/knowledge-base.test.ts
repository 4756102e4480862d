// The knowledge base: passages cut at real sentence ends, headings kept as the label of the passage
// after them, and through the API ingest, then ranked passages with citations.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { MAX_PASSAGE_WORDS, splitPassages } from '../../../../plugins/campaign/modules/knowledge-base/knowledge-base.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { campaignApp } from '../../../support/campaign.js'

t.test('passages are paragraphs, cut at sentence ends beyond the word limit', async t => {
  t.same(await splitPassages('One two.\n\n  Three\nfour.  \n\n\n'), ['One two.', 'Three four.'])
  const sentence = `${'word '.repeat(49)}end. `
  const long = await splitPassages(sentence.repeat(5))
  t.equal(long.length, 3)
  t.ok(long.every(p => p.split(' ').length <= MAX_PASSAGE_WORDS))
})

t.test('sentence ends are real ones: decimals, abbreviations, URLs and e-mail addresses stay whole', async t => {
  const text = 'The plan sets the minimum wage at $17.25 per hour, up 3.4 percent. Dr. Alvarez briefed U.S. officials on Jan. 5 at 3 p.m. The full text is at https://example.org/plan.v2.html and questions go to policy.team@campaign.org. Mr. Lopez agreed.'
  const words = (s: string): number => s.split(' ').length
  const cut = await splitPassages(`${'Filler words here. '.repeat(Math.ceil((MAX_PASSAGE_WORDS - words(text) + 5) / 3))}\n\n${text}`)
  t.equal(cut.at(-1), text, 'a paragraph kept as written, every number, name and address whole')
  const long = Array.from({ length: 10 }, () => text).join(' ')
  const passages = await splitPassages(long)
  t.ok(passages.length > 2, `a long paragraph is cut (${passages.length} passages)`)
  t.equal(passages.join(' '), long, 'nothing lost or changed')
  t.same(passages.filter(p => /\$17\. 25|3\. 4 percent|Dr\.$|U\.$|example\.$/.test(p)), [], 'cut only where a sentence ends')
})

t.test('headings label the passage after them; no passage or sentence is a heading', async t => {
  const text = 'Transit Plan for Riverside\n\nSee Sec. 4 of the plan. Prop. 12 passed in 2018.\n\n## Fares\nFares will be free for students.\n\nFunding\n\nThe state grant pays for it.'
  const passages = await splitPassages(text, 'Transit Plan for Riverside')
  t.same(passages, [
    'Transit Plan for Riverside\n\nSee Sec. 4 of the plan. Prop. 12 passed in 2018.',
    '## Fares\n\nFares will be free for students.',
    'Funding\n\nThe state grant pays for it.'
  ])
  const engine = await localEngine()
  t.same(passages.flatMap(p => engine.sentences(p)), ['See Sec. 4 of the plan.', 'Prop. 12 passed in 2018.', 'Fares will be free for students.', 'The state grant pays for it.'],
    'read again, each passage\'s heading is a heading, not a sentence')
  t.same(await splitPassages('Housing for everyone\nWe will build homes.', 'Housing for everyone'), ['Housing for everyone\n\nWe will build homes.'], 'a first line repeating the title, whatever its case')
})

t.test('through the API', async t => {
  const { call } = await campaignApp(t)

  await t.test('knowledge base: ingest, then ranked passages with citations', async t => {
    const doc = await call<{ document_id: string, passage_count: number }>('kb-ingest', {
      title: 'Housing plan', source: 'platform.pdf',
      text: 'We will build 10,000 affordable homes near transit.\n\nRent control protects tenants from sudden increases.\n\nParks get new funding.'
    })
    t.match(doc, { document_id: /^[0-9a-f]{16}$/, passage_count: 3 })
    await call('kb-ingest', { title: 'Transit plan', text: 'Night buses and transit passes for students.' })
    const answer = await call<{ results: Array<{ cite: number, title: string, passage: number, text: string, score: number }>, citations: string[] }>('kb-query', { query: 'affordable homes transit', limit: 2 })
    t.same(answer.results.map(r => [r.cite, r.title, r.passage]), [[1, 'Housing plan', 0], [2, 'Transit plan', 0]])
    t.ok(answer.results[0].score > answer.results[1].score)
    t.equal(answer.results[0].text, 'We will build 10,000 affordable homes near transit.')
    t.same(answer.citations, ['[1] Housing plan, passage 1', '[2] Transit plan, passage 1'])
    const again = await call<{ document_id: string }>('kb-ingest', { title: 'Housing plan', source: 'platform.pdf', text: 'Only parks now.' })
    t.not(again.document_id, doc.document_id, 'another text is another document')
    await t.rejects(call('kb-ingest', { title: 'Empty', text: ' \n\n ' }), new ServerFunctionError(400, 'text holds no words to index', 'BERTH_BAD_REQUEST'))
    const wage = 'Our plan raises the minimum wage to $17.25 per hour by 2027, up 3.4 percent a year. Dr. Reyes of the U.S. Department of Labor reviewed the figures. Read more at https://example.org/wage.html or write to policy@campaign.example.'
    await call('kb-ingest', { title: 'Wage plan', text: `${wage}\n\n${'Other plank text goes here. '.repeat(40)}` })
    const figures = await call<{ results: Array<{ text: string }> }>('kb-query', { query: 'minimum wage per hour', limit: 1 })
    t.equal(figures.results[0].text, wage, 'figures, titles, URLs and addresses come back as written')
  })
})
