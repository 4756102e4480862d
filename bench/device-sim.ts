// Device simulator / load generator: N devices upload chunks over the real POST /ingest/chunks endpoint.
// Run: npm run build && node dist/bench/device-sim.js --help
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Command, InvalidArgumentError } from 'commander'
import { ADMIN_PASSWORD_FILE } from '../plugins/ingest/commands.js'
import { deviceIds, registerEncrypted, runLoad, type SimDevice } from './telemetry-load.js'

interface SimOptions {
  url: string
  apiKey?: string
  devices: number
  chunks: number
  frames: number
  concurrency: number
  seconds: number
  firstSequence: number
  idPrefix: string
  encrypt?: boolean
  compress?: boolean
  cbor?: boolean
  mtu?: number
  preEncode?: boolean
  user?: string
  password?: string
  stateDir: string
}

const integer = (min: number) => (value: string): number => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer of at least ${min}`)
  return n
}

const hexPrefix = (value: string): string => {
  if (!/^[0-9a-f]{8}$/.test(value)) throw new InvalidArgumentError('expected 8 lowercase hex characters')
  return value
}

/** A provisioner's credentials: the options, BERTH_TELEMETRY_USER/PASSWORD, or the server's generated admin password. */
function credentials (options: SimOptions): { user: string, password: string } {
  const user = options.user ?? process.env.BERTH_TELEMETRY_USER
  const password = options.password ?? process.env.BERTH_TELEMETRY_PASSWORD
  if (user !== undefined && password !== undefined) return { user, password }
  const file = join(options.stateDir, ADMIN_PASSWORD_FILE)
  if (!existsSync(file)) throw new Error(`--encrypt needs a provisioner: give --user and --password, set BERTH_TELEMETRY_USER and BERTH_TELEMETRY_PASSWORD, or point --state-dir at the server's state directory (${file} does not exist)`)
  return { user: 'admin', password: readFileSync(file, 'utf8').trim() }
}

async function simulate (options: SimOptions): Promise<void> {
  const apiKey = options.apiKey ?? process.env.INGEST_API_KEY
  if (apiKey === undefined || apiKey === '') throw new Error('no device key: give --api-key or set INGEST_API_KEY')
  const url = new URL(options.url)
  const ids = deviceIds(options.devices, options.idPrefix)
  let devices: SimDevice[] = ids.map(id => ({ id }))
  if (options.encrypt === true) {
    const { user, password } = credentials(options)
    devices = await registerEncrypted(url, user, password, ids)
  }
  const encoding = [options.cbor === true ? 'CBOR' : 'Avro', options.compress === true ? 'RLE' : '', options.encrypt === true ? 'AES-CCM' : '', options.mtu !== undefined ? `MTU ${options.mtu}` : '']
  console.log(`${options.devices} device(s) × ${options.chunks} chunk(s), ${options.frames} frame(s) per request, ${options.concurrency} in flight, ${encoding.filter(e => e !== '').join(' + ')}, at most ${options.seconds} s`)
  const totals = await runLoad({
    url, apiKey, devices, chunksPerDevice: options.chunks, framesPerRequest: options.frames, concurrency: options.concurrency,
    seconds: options.seconds, firstSequence: options.firstSequence, compress: options.compress, cbor: options.cbor, mtu: options.mtu,
    preEncode: options.preEncode
  })
  console.log(`${totals.requests} request(s), ${totals.frames} frame(s) in ${totals.seconds.toFixed(2)} s`)
  console.log(`accepted ${totals.accepted}, duplicate ${totals.duplicate}, partial ${totals.partial}, rejected ${totals.rejected}`)
  console.log(`${Math.round(totals.accepted / totals.seconds)} chunks/s accepted`)
  for (const reason of totals.reasons) console.log(`rejected: ${reason}`)
  if (totals.rejected > 0) process.exitCode = 1
}

const program = new Command('device-sim')
  .description('simulate devices uploading telemetry chunks to POST /ingest/chunks; exits 1 when a frame is rejected')
  .option('--url <url>', 'telemetry listener', 'http://127.0.0.1:6881')
  .option('--api-key <key>', 'device key sent as X-API-Key (default: env INGEST_API_KEY)')
  .option('--devices <n>', 'number of devices', integer(1), 10)
  .option('--chunks <n>', 'chunks per device', integer(1), 100)
  .option('--frames <n>', 'frames per request', integer(1), 10)
  .option('--concurrency <n>', 'requests in flight', integer(1), 8)
  .option('--seconds <n>', 'stop sending after this long', integer(1), 60)
  .option('--first-sequence <n>', 'sequence number of every device’s first chunk (the same ids and sequences again are duplicates)', integer(0), 1)
  .option('--id-prefix <hex>', 'first 8 hex characters of every device id; the device index follows', hexPrefix, 'd5000000')
  .option('--encrypt', 'AES-128-CCM: register the devices through the API first (a key each)')
  .option('--compress', 'RLE-compress the payloads')
  .option('--cbor', 'CBOR payloads instead of Avro')
  .option('--mtu <bytes>', 'split chunks into fragments of at most this many payload bytes', integer(1))
  .option('--pre-encode', 'encode every chunk before sending, so that the rate measures the server rather than this process')
  .option('--user <name>', 'provisioner for --encrypt (default: env BERTH_TELEMETRY_USER)')
  .option('--password <password>', 'its password (default: env BERTH_TELEMETRY_PASSWORD)')
  .option('--state-dir <dir>', 'server state directory holding the generated admin password, used when no user is given', '.berth')
  .action(simulate)

try {
  await program.parseAsync()
} catch (err) {
  console.error(`device-sim: ${(err as Error).message}`)
  process.exitCode = 2
}
