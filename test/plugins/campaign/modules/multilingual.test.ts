// Multilingual: the campaign glossary translates what it covers and says what it did not (full,
// partial or none); then translate-content through the API.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { localEngine } from '../../../../plugins/campaign/language/local-engine.js'
import { Glossary } from '../../../../plugins/campaign/modules/multilingual/glossary.js'
import { glossaryTranslation, languageName } from '../../../../plugins/campaign/modules/multilingual/multilingual.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'
import { HOUSING_PLAN, POSTS, PROMISE } from '../fixtures/review.js'

t.test('multilingual: the campaign glossary translates what it covers and says what it did not', async t => {
  const engine = await localEngine()
  const glossary = Glossary.load()
  const local = (text: string, source: string, target: string): ReturnType<typeof glossaryTranslation> => glossaryTranslation(glossary, text, source, target, engine.entities(text).people)

  const full = local('Vote for Maria Lopez on Election Day! Find your polling place.', 'en', 'es')
  t.match(full, { translated: 'full', coverage: 1, untranslated: [], note: /No translation model is configured; the campaign glossary covered the whole text \(3 phrases\)/ })
  t.equal(full.translation, 'Vote por Maria Lopez el día de las elecciones! Encuentre su centro de votación.', 'the name is kept, the phrases translated')

  const partial = local('Vote for Maria Lopez. She will fix the potholes on Elm Street.', 'en', 'es')
  t.match(partial, { translated: 'partial', untranslated: ['She will fix the potholes on Elm Street'], note: /only the campaign glossary was applied: 1 phrase translated, 1 run of words left as written/ })
  t.equal(partial.translation, 'Vote por Maria Lopez. ⟦She will fix the potholes on Elm Street⟧.', 'the uncovered words are marked, not pretended')
  t.equal(partial.coverage, 0.2, '2 of 10 words')

  t.equal(local('Gracias por su apoyo. Cada voto cuenta.', 'es', 'fr').translation, 'Merci pour votre soutien. Chaque voix compte.', 'from any glossary language to any other')
  t.match(local('The weather is lovely.', 'en', 'de'), { translated: 'none', translation: '', note: /covers none of this text: nothing was translated/ })
  t.match(local('Vote for Maria Lopez.', 'en', 'ja'), { translated: 'none', translation: '', note: /the campaign glossary has no Japanese phrases \(it covers English, Spanish, French, German\)/ })
  t.match(local('!!!', 'und', 'es'), { translated: 'none', note: /give source_language/ })
  t.equal(languageName('target_language', 'fr'), 'French')
  t.throws(() => languageName('target_language', 'xx'), { message: 'invalid arguments: /target_language: "xx" is not an ISO 639-1 language code' })
})

t.test('through the API', async t => {
  const { login: cookie, call } = await campaignApp(t)
  const [volunteer, readonly] = [await cookie('volunteer'), await cookie('readonly')]

  await t.test('translate-content: volunteers translate with the glossary; 400 for an unknown language, 413 for a long text', async t => {
    interface Translated { translation: string, translated: string, method: string, source_language: string, detected: { language: string } | null, note: string, sources: string[], resource_id: string, engine: string }
    const result = await call<Translated>('translate-content', { text: 'Thank you for your support. Every vote counts!', target_language: 'fr' }, volunteer)
    t.match(result, { translation: 'Merci pour votre soutien. Chaque voix compte!', translated: 'full', method: 'glossary', source_language: 'en', detected: { language: 'en' }, engine: /^local/, resource_id: /^[0-9a-f]{16}$/ })
    t.same(result.sources, ['campaign glossary (plugins/campaign/data/campaign-glossary.toml)', 'glossary: Thank you for your support → Merci pour votre soutien', 'glossary: Every vote counts → Chaque voix compte'])
    const same = await call<Translated>('translate-content', { text: 'Hola', target_language: 'es', source_language: 'es' })
    t.match(same, { translation: 'Hola', method: 'unchanged', note: 'The text is already in Spanish: nothing to translate.' })
    await t.rejects(call('translate-content', { text: 'Hi', target_language: 'xx' }), new ServerFunctionError(400, 'invalid arguments: /target_language: "xx" is not an ISO 639-1 language code', 'BERTH_BAD_REQUEST'))
    t.equal(await statusOf(call('translate-content', { text: 'Hi', target_language: 'spanish' })), 400, 'not a two-letter code')
    const long = 'Vote. '.repeat(3400)
    await t.rejects(call('translate-content', { text: long, target_language: 'es' }), new ServerFunctionError(413, `text is ${long.length.toLocaleString('en-US')} characters; at most 20,000 are analysed at once`, 'BERTH_PAYLOAD_TOO_LARGE'))
    t.equal(await statusOf(call('translate-content', { text: 'Hi', target_language: 'es' }, readonly)), 403, 'readonly does not write the campaign\'s words')
  })

  await call('ingest-posts', { posts: POSTS })
  await call('kb-ingest', { title: 'Housing plan', text: HOUSING_PLAN })
  await call('extract-commitments', { text: PROMISE, said_on: '2025-06-01', source: 'launch speech' })
  await call('analyze-regulation', { title: 'Reporting Act', jurisdiction: 'State', text: 'SECTION 2. Reports.\nEach committee shall file a pre-election report no later than May 20, 2026.' })
})
