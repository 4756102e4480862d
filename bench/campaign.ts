// Campaign server-function latency, one request at a time over HTTP + CBOR as the UI calls them:
// sentiment-summary and detect-spikes over BENCH_POSTS stored posts, analyze-article on a 2,000-word
// article, and ingest-posts throughput (batches of 500). Beside them, the floor: reading the same
// posts straight from LMDB in the server's process. Server and client share one process.
// Each latency is measured BENCH_RUNS times; the table gives the median p50 and p99 of the runs.
// Run: npm run build && node dist/bench/campaign.js   (BENCH_POSTS, BENCH_REQUESTS, BENCH_RUNS bound the work)
import pino from 'pino'
import campaign from '../plugins/campaign/index.js'
import devIdp from '../plugins/dev-idp/index.js'
import { callServerFunction } from '../plugins/campaign/client.js'
import type { DevUser } from '../plugins/dev-idp/users.js'
import { createKernel } from '../kernel/index.js'
import { scriptedLogin } from '../test/support/campaign.js'
import { loopbackListeners } from '../test/support/kernel.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { envInt, markdownTable, median } from './stats.js'

const POSTS = envInt('BENCH_POSTS', 10_000)
const REQUESTS = envInt('BENCH_REQUESTS', 200)
/** Each latency is measured this many times (REQUESTS requests each); the table gives the medians. */
const RUNS = envInt('BENCH_RUNS', 3)
const BATCH = 500
const SOURCES = ['twitter', 'facebook', 'forum', 'news-comments']
const PHRASES = [
  'The new transit plan is fantastic, finally someone listens to commuters',
  'Rents are out of control and the city does nothing about it',
  'The council meets on Tuesday at 7 pm in the library annex',
  'Terrible answer on housing, he dodged every question tonight',
  'Great turnout at the town hall, so proud of our volunteers',
  'The water report is good news for the whole valley',
  'Crime is rising and the police budget was cut again',
  'Early voting starts on the 20th at every library branch'
]

function percentile (sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function timed (count: number, once: (i: number) => Promise<unknown>): Promise<{ p50: number, p99: number }> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const began = performance.now()
    await once(i)
    times.push(performance.now() - began)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
}

/** A 2,000-word article: the phrases above with names and places, in paragraphs. */
function article (): string {
  const people = ['Maria Lopez', 'John Smith', 'Karen Bass', 'David Chen']
  const places = ['Chicago', 'Denver', 'Boston', 'Seattle']
  const sentences: string[] = []
  for (let i = 0; sentences.join(' ').split(' ').length < 2000; i++) {
    sentences.push(`${people[i % 4]} said in ${places[(i >> 2) % 4]} that ${PHRASES[i % PHRASES.length].toLowerCase()}.`)
  }
  return sentences.reduce((text, sentence, i) => text + sentence + (i % 6 === 5 ? '\n\n' : ' '), '').split(' ').slice(0, 2000).join(' ')
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-campaign-'))
  const kernel = await createKernel({
    cwd: dir,
    config: { server: { state_dir: dir, listeners: loopbackListeners([campaign]) }, campaign: { dev_idp: true } },
    env: {},
    plugins: [devIdp, campaign],
    logger: pino({ level: 'silent' })
  })
  try {
    await kernel.start()
    const baseUrl = kernel.url('app')
    const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
    const { cookie } = await scriptedLogin(baseUrl, staff)
    const call = async (name: string, args: object): Promise<unknown> => await callServerFunction(name, args, { baseUrl, headers: { cookie } })

    const start = Date.parse('2026-05-01T00:00:00Z')
    const step = Math.floor(14 * 86_400_000 / POSTS)
    const rates: number[] = []
    for (let first = 0; first < POSTS; first += BATCH) {
      const posts = Array.from({ length: Math.min(BATCH, POSTS - first) }, (_, k) => {
        const n = first + k
        return { text: `${PHRASES[n % PHRASES.length]} #${n}`, source: SOURCES[n % SOURCES.length], author: `user${n % 300}`, posted_at: new Date(start + n * step).toISOString() }
      })
      const began = performance.now()
      await call('ingest-posts', { posts })
      rates.push(posts.length / ((performance.now() - began) / 1000))
    }
    const text = article()
    const measures: Array<[string, number, (i: number) => Promise<unknown>]> = [
      [`sentiment-summary, by hour, over ${POSTS} posts`, REQUESTS, async () => await call('sentiment-summary', { bucket: 'hour' })],
      [`sentiment-summary, by day, one source, over ${POSTS} posts`, REQUESTS, async () => await call('sentiment-summary', { bucket: 'day', source: 'forum' })],
      [`detect-spikes over ${POSTS} posts`, REQUESTS, async () => await call('detect-spikes', {})],
      [`floor: reading the ${POSTS} posts from LMDB in-process`, REQUESTS, async () => { let n = 0; for await (const _post of kernel.service('campaign').posts.between(undefined, undefined)) n++; return n }],
      // A different article each time (one sentence changes): nothing of an earlier request is reused.
      [`analyze-article, ${text.split(' ').length} words`, Math.min(REQUESTS, 50), async i => await call('analyze-article', { title: 'Bench', outlet: 'bench', text: `Edition ${i}. ${text}` })]
    ]
    const runs = new Map<string, Array<{ p50: number, p99: number }>>(measures.map(([what]) => [what, []]))
    for (let run = 0; run < RUNS; run++) {
      for (const [what, count, once] of measures) runs.get(what)?.push(await timed(count, once))
    }
    const rows = [...runs].map(([what, results]) => [what, median(results.map(r => r.p50)).toFixed(1), median(results.map(r => r.p99)).toFixed(1)])
    console.log(markdownTable(['server function', `p50 ms (median of ${RUNS})`, `p99 ms (median of ${RUNS})`], rows))
    console.log(`\ningest-posts: median ${Math.round(median(rates))} posts/s (batches of ${BATCH}, ${rates.length} batches)`)
  } finally {
    await kernel.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
