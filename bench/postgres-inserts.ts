// How PostgreSQL best takes a request's rows: the CPU time of the database's backend and of this
// process per row inserted, for the same rows of a metrics series (the table's shape and key) sent as a
// multi-row INSERT … VALUES (a parameter a value), as arrays through unnest (a parameter a column,
// prepared), as one jsonb parameter read with jsonb_to_recordset (prepared), and as the same JSON
// inline in the statement's text. Backend CPU is read from /proc (Linux). Side by side in one run.
// Run: npm run build && node dist/bench/postgres-inserts.js   (BENCH_RUNS, BENCH_BATCHES bound the work)
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { startBenchPostgres } from './postgres.js'
import { envInt, median } from './stats.js'

const RUNS = envInt('BENCH_RUNS', 5)
const BATCHES = envInt('BENCH_BATCHES', 200)
const ROWS = 300
const COLUMNS = ['device', 'received_at', 'sequence', 'entry', 'key', 'kind', 'value', 'uptime_ms'] as const
const RECORDSET = 'x (device text, received_at bigint, sequence bigint, entry int, key text, kind text, value float8, uptime_ms bigint)'

type Row = Record<(typeof COLUMNS)[number], string | number>
type Way = (client: pg.Client, rows: Row[]) => Promise<unknown>

const WAYS: Record<string, Way> = {
  'INSERT … VALUES': async (client, rows) => {
    const params: unknown[] = []
    const tuples = rows.map(row => `(${COLUMNS.map(column => { params.push(row[column]); return `$${params.length}` }).join(', ')})`)
    return await client.query(`insert into m values ${tuples.join(', ')}`, params)
  },
  'unnest of arrays': async (client, rows) => await client.query({
    name: 'unnest',
    text: 'insert into m select * from unnest($1::text[], $2::int8[], $3::int8[], $4::int[], $5::text[], $6::text[], $7::float8[], $8::int8[])',
    values: COLUMNS.map(column => rows.map(row => row[column]))
  }),
  'jsonb parameter': async (client, rows) => await client.query({
    name: 'jsonb', text: `insert into m select * from jsonb_to_recordset($1::jsonb) as ${RECORDSET}`, values: [JSON.stringify(rows)]
  }),
  'jsonb in the text': async (client, rows) => await client.query(`insert into m select * from jsonb_to_recordset('${JSON.stringify(rows).replaceAll("'", "''")}'::jsonb) as ${RECORDSET}`)
}

/** CPU seconds process `pid` has used (user and system), from /proc. */
function cpuSeconds (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

let sequence = 0
function batch (): Row[] {
  const at = Date.now()
  return Array.from({ length: ROWS }, (_, i) => ({ device: 'be00000000000001', received_at: at, sequence: sequence++, entry: i % 3, key: 'battery_mv', kind: 'gauge', value: 3300.5 + i, uptime_ms: 123_456 }))
}

/** µs of backend and of this process per row, for BATCHES batches of ROWS rows. */
async function measure (client: pg.Client, backend: number, way: Way): Promise<{ database: number, node: number }> {
  const before = cpuSeconds(backend)
  const own = process.cpuUsage()
  for (let i = 0; i < BATCHES; i++) await way(client, batch())
  const used = process.cpuUsage(own)
  const rows = BATCHES * ROWS
  return { database: (cpuSeconds(backend) - before) * 1e6 / rows, node: (used.user + used.system) / rows }
}

async function main (): Promise<void> {
  const postgres = await startBenchPostgres()
  const url = await postgres.database()
  const client = new pg.Client({ connectionString: url, options: '-c standard_conforming_strings=on' })
  await client.connect()
  try {
    await client.query('create table m (device text collate "C" not null, received_at bigint not null, sequence bigint not null, entry int not null, key text not null, kind text not null, value float8 not null, uptime_ms bigint not null, primary key (device, received_at, sequence, entry))')
    const [{ pid }] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows
    const figures = new Map(Object.keys(WAYS).map(name => [name, { database: [] as number[], node: [] as number[] }]))
    for (const way of Object.values(WAYS)) await measure(client, pid, way) // warm-up: plans, JIT
    for (let run = 0; run < RUNS; run++) {
      for (const [name, way] of Object.entries(WAYS)) {
        const { database, node } = await measure(client, pid, way)
        figures.get(name)?.database.push(database)
        figures.get(name)?.node.push(node)
      }
      await client.query('truncate m')
    }
    console.log(`Median of ${RUNS} runs of ${BATCHES} batches of ${ROWS} rows; PostgreSQL 15 on this machine; Node ${process.version}. CPU µs per row (this process: building the rows too).\n`)
    console.log('| rows sent as | PostgreSQL (µs/row) | Node (µs/row) |\n| --- | --- | --- |')
    for (const [name, { database, node }] of figures) console.log(`| ${name} | ${median(database).toFixed(2)} | ${median(node).toFixed(2)} |`)
  } finally {
    await client.end()
    await postgres.drop(url)
    await postgres.close()
  }
}

await main()
