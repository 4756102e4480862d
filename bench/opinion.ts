// Accuracy of the local engine's opinion reading on the labelled set in bench/fixtures/opinion: the
// sentiment of each sentence (engine.sentiment) and the tone of each article (the media monitor's
// analyzeArticle), for the development and the held-out parts, with confusion matrices (rows: the
// label, columns: what the engine said) and the sentences' accuracy by kind. Parts named as arguments
// are the only ones measured (the design parts while designing rules); without arguments, all of
// them. Mistakes are listed for the design parts only.
// Run: npm run build && node dist/bench/opinion.js [part…]
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from '../kernel/paths.js'
import { localEngine } from '../plugins/campaign/language/local-engine.js'
import { analyzeArticle } from '../plugins/campaign/modules/media-monitor/media-coverage.js'
import { markdownTable } from './stats.js'

type Split = 'dev' | 'held-out' | 'held-out-2' | 'held-out-3' | 'held-out-4' | 'held-out-5'
interface LabelledSentence { text: string, label: string, kind: string, split: Split }
interface LabelledArticle { title: string, text: string, tone: string, split: Split }

const FIXTURES = join(PACKAGE_ROOT, 'bench', 'fixtures', 'opinion')
const ALL_SPLITS: readonly Split[] = ['dev', 'held-out', 'held-out-2', 'held-out-3', 'held-out-4', 'held-out-5']
const chosen = process.argv.slice(2)
const unknown = chosen.filter(c => !(ALL_SPLITS as readonly string[]).includes(c))
if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}: the parts are ${ALL_SPLITS.join(', ')}`)
const SPLITS = chosen.length === 0 ? ALL_SPLITS : ALL_SPLITS.filter(s => chosen.includes(s))
/** The parts read to design the rules: their mistakes are listed; the last part's never are. */
const DESIGN_SPLITS: readonly Split[] = ['dev', 'held-out', 'held-out-2', 'held-out-3', 'held-out-4']
const SENTIMENTS = ['positive', 'negative', 'neutral']
const TONES = ['favourable', 'critical', 'mixed', 'factual']

const read = <T> (file: string): T[] => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as T[]

interface Scored { gold: string, got: string, kind?: string }

const percent = (right: number, all: number): string => `${right} / ${all} (${(100 * right / Math.max(1, all)).toFixed(1)}%)`
const accuracy = (items: readonly Scored[]): string => percent(items.filter(i => i.gold === i.got).length, items.length)

function confusion (items: readonly Scored[], labels: readonly string[]): string {
  const rows = labels.map(gold => [gold, ...labels.map(got => String(items.filter(i => i.gold === gold && i.got === got).length))])
  return markdownTable(['label ↓ / engine →', ...labels], rows)
}

async function main (): Promise<void> {
  const engine = await localEngine()
  const sentences = read<LabelledSentence>('sentences.json')
  const articles = read<LabelledArticle>('articles.json')
  console.log(`engine: ${engine.name}\n`)
  for (const split of SPLITS) {
    const scored = sentences.filter(s => s.split === split).map(s => ({ gold: s.label, got: engine.sentiment(s.text).label, kind: s.kind }))
    console.log(`## Sentence sentiment, ${split}: ${accuracy(scored)}\n\n${confusion(scored, SENTIMENTS)}\n`)
    const kinds = [...new Set(scored.map(s => s.kind))].sort()
    console.log(markdownTable(['kind', 'right'], kinds.map(kind => [kind, accuracy(scored.filter(s => s.kind === kind))])), '\n')
    const wrong = scored.filter(s => s.gold !== s.got)
    if (DESIGN_SPLITS.includes(split) && wrong.length > 0) {
      console.log(`Wrong (${split}):`)
      for (const s of sentences.filter(x => x.split === split && engine.sentiment(x.text).label !== x.label)) console.log(`- [${s.label} → ${engine.sentiment(s.text).label}] ${s.text}`)
      console.log()
    }
  }
  for (const split of SPLITS) {
    const part = articles.filter(a => a.split === split)
    const scored = part.map(a => ({ gold: a.tone, got: analyzeArticle(engine, a.title, a.text).tone }))
    console.log(`## Article tone, ${split}: ${accuracy(scored)}\n\n${confusion(scored, TONES)}\n`)
    if (DESIGN_SPLITS.includes(split)) {
      for (const [i, a] of part.entries()) {
        if (scored[i].gold === scored[i].got) continue
        const { sentiment } = analyzeArticle(engine, a.title, a.text)
        console.log(`- [${a.tone} → ${scored[i].got}] ${a.title} (balance ${sentiment.opinion_balance}, density ${sentiment.opinion_density})`)
      }
      console.log()
    }
  }
}

await main()
