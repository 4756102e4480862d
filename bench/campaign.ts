// Campaign server-function latency, one request at a time over HTTP + CBOR as the UI calls them, on the
// default backends (sessions in memory, data in LMDB) and on the shared ones (sessions in Redis, data in
// PostgreSQL, both durable: AOF fsync always, PostgreSQL fsync on) side by side in one run: check-auth,
// kb-query over BENCH_DOCS documents, sentiment-summary and detect-spikes over BENCH_POSTS stored posts,
// analyze-article on a 2,000-word article, and ingest-posts throughput (batches of 500); beside them,
// the floor (reading the posts through the store in the server's process) and, on PostgreSQL, the
// search the knowledge base could have used instead: full-text search in SQL over the same passages.
// The CSV round trip of BENCH_PEOPLE people: import-csv of a fresh file each run (rows/s, with
// csv-parse alone on the same file as the floor) and the streamed /export/people (rows/s, and the
// heap the export adds at its peak, measured again once the store holds every run's people).
// The summary part: sentiment-summary over BENCH_POSTS posts by one caller and by BENCH_CALLERS callers
// at once (each sending its next request when its last is answered), for the whole stream by hour, by
// day for one source, and for a range that starts and ends inside an hour.
// Each latency is measured BENCH_RUNS times; the table gives the median p50 and p99 of the runs.
// Run: npm run build && node --expose-gc dist/bench/campaign.js   (BENCH_PARTS=functions, csv or summary for one part, default functions,csv; BENCH_POSTS, BENCH_DOCS, BENCH_PEOPLE, BENCH_REQUESTS, BENCH_RUNS, BENCH_CALLERS
// bound the work; BENCH_SHARED=0 leaves the shared backends out). Needs Debian's postgresql-15 and
// redis-server for the shared column.
import pino from 'pino'
import campaign from '../plugins/campaign/index.js'
import devIdp from '../plugins/dev-idp/index.js'
import { callServerFunction } from '../plugins/campaign/client.js'
import type { DevUser } from '../plugins/dev-idp/users.js'
import { createKernel } from '../kernel/index.js'
import { scriptedLogin } from '../test/support/campaign.js'
import { ownPostgres } from '../test/support/postgres.js'
import { ownRedis } from '../test/support/redis.js'
import pg from 'pg'
import { loopbackListeners } from '../test/support/kernel.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { envInt, markdownTable, median } from './stats.js'

const POSTS = envInt('BENCH_POSTS', 10_000)
const DOCS = envInt('BENCH_DOCS', 200)
const SHARED = process.env.BENCH_SHARED !== '0'
const REQUESTS = envInt('BENCH_REQUESTS', 200)
/** Each latency is measured this many times (REQUESTS requests each); the table gives the medians. */
const RUNS = envInt('BENCH_RUNS', 3)
const BATCH = 500
const PEOPLE = envInt('BENCH_PEOPLE', 10_000)
/** Callers at once in the summary part. */
const CALLERS = envInt('BENCH_CALLERS', 8)
/** `functions`, `csv`, `summary`, or several separated by commas (default: functions and csv): what is measured. */
const PARTS = (process.env.BENCH_PARTS ?? 'functions,csv').split(',')
/** Whether posts are ingested (and their rate measured) before the functions are. */
const WITH_POSTS = PARTS.includes('functions') || PARTS.includes('summary')
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

interface Latency { p50: number, p99: number, failed: number }

/**
 * `count` requests by `callers` callers at once, each sending its next request when its last is
 * answered: p50 and p99 of their latencies, a failed request counted (and its time until it failed
 * kept among the latencies).
 */
async function timed (count: number, once: (i: number) => Promise<unknown>, callers = 1): Promise<Latency> {
  const times: number[] = []
  let failed = 0
  let next = 0
  const caller = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      const began = performance.now()
      await once(i).catch(() => { failed++ })
      times.push(performance.now() - began)
    }
  }
  await Promise.all(Array.from({ length: Math.min(callers, count) }, caller))
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), failed }
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

/** `count` knowledge-base documents of about 300 words: the phrases with a topic and places of their own. */
function documents (count: number): Array<{ title: string, text: string }> {
  const topics = ['transit', 'housing', 'water', 'schools', 'parks', 'policing', 'budget', 'libraries', 'roads', 'clinics']
  return Array.from({ length: count }, (_, d) => {
    const topic = topics[d % topics.length]
    const paragraphs = Array.from({ length: 4 }, (_, p) => Array.from({ length: 6 }, (_, k) =>
      `In district ${d % 17} the ${topic} plan ${PHRASES[(d + p + k) % PHRASES.length].toLowerCase()} (item ${d}-${p}-${k}).`).join(' '))
    return { title: `${topic} plan ${d}`, text: paragraphs.join('\n\n') }
  })
}

type Measures = Map<string, Latency>

/** One latency measured: `count` requests by `callers` callers at once, in the table of its part. */
interface Measure {
  what: string
  part: 'functions' | 'summary'
  count: number
  callers: number
  once: (i: number) => Promise<unknown>
}

/** Everything measured on one pair of backends: `campaign` adds the [campaign] settings that choose them. */
interface Extra {
  /** Run once the posts and documents are stored. */
  prepare: () => Promise<void>
  measures: Measure[]
}

/** Everything measured on one pair of backends: `campaignSettings` adds the [campaign] settings that choose them. */
interface RoundTrip { importRate: number, parseRate: number, exportRate: number, exportHeapMb: number, exportHeapMbLast: number, storedPeople: number }

/** A people file of `count` rows, every address made unique by `run`. */
function peopleCsv (run: number, count: number): string {
  const rows = Array.from({ length: count }, (_, i) => `Person ${run}-${i},p${run}-${i}@bench.test,+1555${String(run).padStart(2, '0')}${String(i).padStart(6, '0')},${i % 900} Main St,City ${i % 40},${10000 + (i % 500)},"volunteer; ward-${i % 12}",${i % 3 === 0 ? 'yes' : 'no'},${i % 7}`)
  return `name,email,phone,address,city,postcode,tags,email opt-in,custom:score\n${rows.join('\n')}\n`
}

/** The heap still in use: after a full collection (node --expose-gc), else as it stands (garbage included). */
function liveHeap (): number {
  global.gc?.()
  return process.memoryUsage().heapUsed
}

/** Read an export to its end, counting lines, while sampling the live heap every 50 ms: rows/s and the most heap it held (MB). */
async function timedExport (url: URL, cookie: string): Promise<{ rate: number, heapMb: number }> {
  const baseline = liveHeap()
  let peak = baseline
  const sampler = setInterval(() => { peak = Math.max(peak, liveHeap()) }, 50)
  const began = performance.now()
  const response = await fetch(url, { headers: { cookie } })
  let lines = 0
  const decoder = new TextDecoder()
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) lines += decoder.decode(chunk, { stream: true }).split('\n').length - 1
  const seconds = (performance.now() - began) / 1000
  clearInterval(sampler)
  return { rate: (lines - 1) / seconds, heapMb: (peak - baseline) / 1e6 }
}

async function csvRoundTrip (call: (name: string, args: object) => Promise<unknown>, baseUrl: URL, cookie: string): Promise<RoundTrip> {
  const { parse } = await import('csv-parse/sync')
  const imports: number[] = []
  const parses: number[] = []
  const exports: number[] = []
  const heaps: number[] = []
  let last = 0
  for (let run = 0; run < RUNS; run++) {
    const csv = peopleCsv(run, PEOPLE)
    let began = performance.now()
    parse(csv, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true })
    parses.push(PEOPLE / ((performance.now() - began) / 1000))
    began = performance.now()
    const report = await call('import-csv', { kind: 'people', csv, dry_run: false }) as { created: number, failed: number }
    if (report.created !== PEOPLE || report.failed !== 0) throw new Error(`the import made ${report.created} people with ${report.failed} failed rows`)
    imports.push(PEOPLE / ((performance.now() - began) / 1000))
    const exported = await timedExport(new URL('/export/people', baseUrl), cookie)
    exports.push(exported.rate)
    heaps.push(exported.heapMb)
    last = exported.heapMb
  }
  return { importRate: median(imports), parseRate: median(parses), exportRate: median(exports), exportHeapMb: heaps[0], exportHeapMbLast: last, storedPeople: PEOPLE * RUNS }
}

async function measure (campaignSettings: Record<string, unknown>, extra?: Extra): Promise<{ measures: Measures, ingestRate: number, roundTrip: RoundTrip | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-campaign-'))
  const kernel = await createKernel({
    cwd: dir,
    config: { server: { state_dir: dir, listeners: loopbackListeners([campaign]) }, campaign: { dev_idp: true, ...campaignSettings } },
    env: {},
    plugins: [devIdp, campaign],
    logger: pino({ level: 'silent' })
  })
  try {
    await kernel.start()
    const baseUrl = kernel.url('app')
    const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
    const { cookie } = await scriptedLogin(baseUrl, staff)
    const once = async (name: string, args: object): Promise<unknown> => await callServerFunction(name, args, { baseUrl, headers: { cookie } })
    // The in-process floor keeps the client off the wire for seconds: a kept-alive connection the server
    // closed as idle meanwhile is found reset by the next call, which is sent again once on a new one.
    const call = async (name: string, args: object): Promise<unknown> => await once(name, args).catch(async (err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'ECONNRESET') throw err
      return await once(name, args)
    })

    const start = Date.parse('2026-05-01T00:00:00Z')
    const step = Math.floor(14 * 86_400_000 / POSTS)
    const rates: number[] = []
    for (let first = 0; WITH_POSTS && first < POSTS; first += BATCH) {
      const posts = Array.from({ length: Math.min(BATCH, POSTS - first) }, (_, k) => {
        const n = first + k
        return { text: `${PHRASES[n % PHRASES.length]} #${n}`, source: SOURCES[n % SOURCES.length], author: `user${n % 300}`, posted_at: new Date(start + n * step).toISOString() }
      })
      const began = performance.now()
      await call('ingest-posts', { posts })
      rates.push(posts.length / ((performance.now() - began) / 1000))
    }
    for (const doc of PARTS.includes('functions') ? documents(DOCS) : []) await call('kb-ingest', doc)
    await extra?.prepare()
    const queries = ['transit commuters plan', 'rents housing city', 'water report valley', 'police budget crime', 'early voting library']
    const text = article()
    const fn = (what: string, once: Measure['once'], count = REQUESTS): Measure => ({ what, part: 'functions', count, callers: 1, once })
    // A range starting and ending inside an hour, eleven days long. A summary measure's name holds its callers after a "|".
    const range = { from: new Date(start + 86_400_000 + 1_023_000).toISOString(), to: new Date(start + 12 * 86_400_000 + 2_580_000).toISOString() }
    const summaries: Array<[string, object]> = [['by hour', { bucket: 'hour' }], ['by day, one source', { bucket: 'day', source: 'forum' }], ['by hour, a range inside hours', { bucket: 'hour', ...range }]]
    const measures: Measure[] = [
      fn('check-auth', async () => await call('check-auth', {})),
      fn(`kb-query over ${DOCS} documents`, async i => await call('kb-query', { query: queries[i % queries.length] })),
      fn(`sentiment-summary, by hour, over ${POSTS} posts`, async () => await call('sentiment-summary', { bucket: 'hour' })),
      fn(`sentiment-summary, by day, one source, over ${POSTS} posts`, async () => await call('sentiment-summary', { bucket: 'day', source: 'forum' })),
      fn(`detect-spikes over ${POSTS} posts`, async () => await call('detect-spikes', {})),
      fn(`floor: reading the ${POSTS} posts through the store in-process`, async () => (await kernel.service('campaign').posts.list(undefined, undefined)).length),
      // A different article each time (one sentence changes): nothing of an earlier request is reused.
      fn(`analyze-article, ${text.split(' ').length} words`, async i => await call('analyze-article', { title: 'Bench', outlet: 'bench', text: `Edition ${i}. ${text}` }), Math.min(REQUESTS, 50)),
      ...summaries.flatMap(([shape, args]) => [1, CALLERS].map(callers => ({
        what: `sentiment-summary, ${shape}, over ${POSTS} posts|${callers}`, part: 'summary' as const, count: REQUESTS, callers, once: async () => await call('sentiment-summary', args)
      }))),
      ...extra?.measures ?? []
    ].filter(m => PARTS.includes(m.part))
    const roundTrip = PARTS.includes('csv') ? await csvRoundTrip(call, baseUrl, cookie) : undefined
    const runs = new Map<string, Latency[]>(measures.map(({ what }) => [what, []]))
    for (let run = 0; run < RUNS; run++) {
      for (const { what, count, once, callers } of measures) runs.get(what)?.push(await timed(count, once, callers))
    }
    return {
      measures: new Map([...runs].map(([what, results]) => [what, { p50: median(results.map(r => r.p50)), p99: median(results.map(r => r.p99)), failed: results.reduce((n, r) => n + r.failed, 0) }])),
      ingestRate: median(rates),
      roundTrip
    }
  } finally {
    await kernel.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Full-text search in PostgreSQL over the knowledge base's passages, as kb-query could have done it (a GIN index on the English tsvector). */
function sqlSearch (url: string): { prepare: () => Promise<void>, search: (i: number) => Promise<unknown>, close: () => Promise<void> } {
  const client = new pg.Client({ connectionString: url })
  const queries = ['transit commuters plan', 'rents housing city', 'water report valley', 'police budget crime', 'early voting library']
  return {
    prepare: async () => {
      await client.connect()
      await client.query(`create index if not exists kb_fts on campaign.records using gin (to_tsvector('english', value #>> '{}')) where tbl = 'kb-passages'`)
      await client.query('analyze campaign.records')
    },
    search: async i => (await client.query(`select key, ts_rank(to_tsvector('english', value #>> '{}'), q) as rank from campaign.records, plainto_tsquery('english', $1) as q
      where tbl = 'kb-passages' and to_tsvector('english', value #>> '{}') @@ q order by rank desc limit 5`, [queries[i % queries.length]])).rows,
    close: async () => { await client.end() }
  }
}

async function main (): Promise<void> {
  const teardowns: Array<() => void | Promise<void>> = []
  const owner = { teardown: (fn: () => void | Promise<void>) => { teardowns.push(fn) } }
  try {
    const local = await measure({})
    let shared: Awaited<ReturnType<typeof measure>> | undefined
    if (SHARED) {
      const database = await ownPostgres(owner, { durable: true })
      const redis = await ownRedis(owner, { durable: true })
      const fts = sqlSearch(database.url())
      teardowns.push(fts.close)
      shared = await measure({ database_url: database.url(), redis_url: redis.url }, {
        prepare: fts.prepare,
        measures: [{ what: 'PostgreSQL full-text search over the same passages (the SQL alone, GIN index)', part: 'functions', count: REQUESTS, callers: 1, once: fts.search }]
      })
    }
    const cell = (m: Measures | undefined, what: string, key: 'p50' | 'p99'): string => {
      const measured = m?.get(what)
      if (measured === undefined) return '—'
      return `${measured[key].toFixed(1)}${key === 'p99' && measured.failed > 0 ? ` (${measured.failed} failed)` : ''}`
    }
    const names = [...new Set([...local.measures.keys(), ...(shared?.measures.keys() ?? [])])]
    const cells = (what: string): string[] => [cell(local.measures, what, 'p50'), cell(local.measures, what, 'p99'), cell(shared?.measures, what, 'p50'), cell(shared?.measures, what, 'p99')]
    const backends = ['default p50 ms', 'default p99 ms', 'Redis + PostgreSQL p50 ms', 'Redis + PostgreSQL p99 ms']
    if (PARTS.includes('functions')) {
      const rows = names.filter(what => !what.includes('|')).map(what => {
        const ratio = shared !== undefined && local.measures.has(what) && shared.measures.has(what) ? ((shared.measures.get(what)?.p99 ?? 0) / (local.measures.get(what)?.p99 ?? 1)).toFixed(2) : '—'
        return [what, ...cells(what), ratio]
      })
      console.log(markdownTable(['server function', ...backends, 'p99 shared / default'], rows))
    }
    if (PARTS.includes('summary')) {
      const rows = names.filter(what => what.includes('|')).map(what => [...what.split('|'), ...cells(what)])
      console.log(markdownTable(['sentiment-summary', 'callers at once', ...backends], rows))
    }
    if (WITH_POSTS) {
      console.log(`\n(medians of ${RUNS} runs of ${REQUESTS} requests each)`)
      console.log(`ingest-posts: median ${Math.round(local.ingestRate)} posts/s on LMDB${shared !== undefined ? `, ${Math.round(shared.ingestRate)} posts/s on PostgreSQL` : ''} (batches of ${BATCH})`)
    }
    const trip = (name: string, r: RoundTrip | undefined): string[] => r === undefined ? [] : [name, String(Math.round(r.importRate)), String(Math.round(r.parseRate)), String(Math.round(r.exportRate)), r.exportHeapMb.toFixed(1), `${r.exportHeapMbLast.toFixed(1)} (${r.storedPeople} people)`]
    if (local.roundTrip !== undefined) {
      console.log(`\nCSV round trip of ${PEOPLE} people (medians of ${RUNS} runs; heap: the most the export held above the heap before it, after full collections${global.gc === undefined ? ' — run with node --expose-gc, these figures include garbage' : ''})\n`)
      console.log(markdownTable(['backend', 'import rows/s', 'csv-parse alone rows/s', 'export rows/s', 'export heap held, first run MB', 'last run MB'], [trip('default (LMDB)', local.roundTrip), trip('PostgreSQL', shared?.roundTrip)].filter(row => row.length > 0)))
    }
  } finally {
    for (const fn of teardowns.reverse()) await fn()
  }
}

await main()
