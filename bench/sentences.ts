// Accuracy of sentence segmentation on the labelled set in test/fixtures/sentences: texts segmented
// exactly right, and the precision and recall of sentence boundaries and of headings, for the tuning
// part and the held-out part, of the engine's segmenter (language/segmenter.ts) and of compromise's,
// which the engine used before. With SEGMENTER_CANDIDATES set to a folder where the npm packages sbd,
// sentence-splitter, wink-nlp and wink-eng-lite-web-model are installed, those are measured too.
// Mistakes are listed for the tuning part only (`--wrong`).
// Run: node --import tsx bench/sentences.ts [--wrong]
import { createRequire } from 'node:module'
import { join } from 'node:path'
import nlp from 'compromise'
import { segmentText } from '../plugins/campaign/language/segmenter.js'
import { precision, readSentenceSet, recall, scoreSegmenter, type Segmented, type SegmenterScore } from './sentence-set.js'
import { markdownTable } from './stats.js'

type Segmenter = (text: string) => Segmented[]

const plainSentences = (sentences: readonly string[]): Segmented[] => sentences.map(text => ({ text }))

/** The maintained segmenters compared with the engine's, when installed in `folder`. */
function candidates (folder: string): Array<[string, Segmenter]> {
  const load = createRequire(join(folder, 'package.json'))
  const version = (name: string): string => (load(`${name}/package.json`) as { version: string }).version
  const sbd = load('sbd') as { sentences: (text: string, options: object) => string[] }
  const splitter = load('sentence-splitter') as { split: (text: string) => Array<{ type: string, raw: string }> }
  const wink = load('wink-nlp') as (model: unknown) => { readDoc: (text: string) => { sentences: () => { out: () => string[] } } }
  const winkDoc = wink(load('wink-eng-lite-web-model'))
  return [
    [`sbd ${version('sbd')} (newline_boundaries)`, text => plainSentences(sbd.sentences(text, { newline_boundaries: true }))],
    [`sentence-splitter ${version('sentence-splitter')}`, text => plainSentences(splitter.split(text).filter(n => n.type === 'Sentence').map(n => n.raw))],
    [`wink-nlp ${version('wink-nlp')} + wink-eng-lite-web-model`, text => plainSentences(winkDoc.readDoc(text).sentences().out())]
  ]
}

const segmenters: Array<[string, Segmenter]> = [
  ['rules (language/segmenter.ts)', text => segmentText(text)],
  ['compromise 14 (the engine before)', text => plainSentences(nlp(text).sentences().out('array') as string[])],
  ...(process.env.SEGMENTER_CANDIDATES === undefined ? [] : candidates(process.env.SEGMENTER_CANDIDATES))
]

const percent = (x: number): string => `${(100 * x).toFixed(1)}%`
const row = (name: string, s: SegmenterScore): string[] => [
  name, `${s.exact} / ${s.texts} (${percent(s.exact / s.texts)})`,
  `${percent(precision(s.boundaries))} (${s.boundaries.right} / ${s.boundaries.found})`,
  `${percent(recall(s.boundaries))} (${s.boundaries.right} / ${s.boundaries.labelled})`,
  s.headings.found === 0 ? 'none found' : `${percent(precision(s.headings))} / ${percent(recall(s.headings))}`
]

const set = readSentenceSet()
for (const [part, texts] of [['tuning', set.filter(t => !t.heldOut)], ['held-out', set.filter(t => t.heldOut)]] as const) {
  const scores = segmenters.map(([name, segment]) => [name, scoreSegmenter(texts, segment)] as const)
  const first = scores[0][1]
  console.log(`## ${part}: ${texts.length} texts, ${first.boundaries.labelled} boundaries, ${first.nonBoundaries} places that are none, ${first.headings.labelled} headings\n`)
  console.log(markdownTable(['segmenter', 'texts exactly right', 'boundary precision', 'boundary recall', 'headings precision / recall'], scores.map(([name, s]) => row(name, s))), '\n')
  if (part === 'tuning' && process.argv.includes('--wrong')) {
    for (const w of first.wrong) console.log(`- line ${w.line}: expected ${JSON.stringify(w.expected)}\n  got      ${JSON.stringify(w.got)}`)
  }
}
