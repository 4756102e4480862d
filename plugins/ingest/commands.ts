// `berth telemetry …`: serve (the server with only the telemetry plugins), report (fleet summary),
// faults and metrics of one device (tables, or --json), migrate (the embedded store into PostgreSQL),
// and hash-password for [ingest].users; `berth gateway` and `berth ota` (ota-commands.ts) beside it.
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ApiClient, formatTable, UsageError, type CliRegistry } from '../../kernel/index.js'
import { USB_BY_ID } from './gateway/usb.js'
import { otaCommands } from './ota-commands.js'
import type { Device, StoredFault, StoredMetric } from './store.js'

export const ADMIN_PASSWORD_FILE = 'telemetry-admin-password'
/** Plugins `telemetry serve` runs. */
const TELEMETRY_PLUGINS = ['ingest', 'symbolication']

const when = (ms: number | null): string => ms === null ? '-' : new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z')
const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`

/** A client for the telemetry API: BERTH_TELEMETRY_USER/PASSWORD, or the generated admin password. */
async function telemetryClient (cli: CliRegistry): Promise<ApiClient> {
  const { urls, stateDir } = await cli.settings()
  const user = process.env.BERTH_TELEMETRY_USER
  const password = process.env.BERTH_TELEMETRY_PASSWORD
  if (user !== undefined && password !== undefined) {
    return new ApiClient(urls.telemetry, `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, 'BERTH_TELEMETRY_USER')
  }
  const file = join(stateDir, ADMIN_PASSWORD_FILE)
  if (!existsSync(file)) throw new Error(`no credentials: set BERTH_TELEMETRY_USER and BERTH_TELEMETRY_PASSWORD, or run on the server host (${file} does not exist)`)
  return new ApiClient(urls.telemetry, `Basic ${Buffer.from(`admin:${readFileSync(file, 'utf8').trim()}`).toString('base64')}`, file)
}

async function allPages<T> (client: ApiClient, path: string, field: 'devices' | 'items'): Promise<T[]> {
  const items: T[] = []
  let cursor: string | null = null
  do {
    const page: Record<string, unknown> & { next_cursor: string | null } = await client.json('GET', `${path}${path.includes('?') ? '&' : '?'}limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    items.push(...page[field] as T[])
    cursor = page.next_cursor
  } while (cursor !== null)
  return items
}

function checkDevice (id: string): string {
  if (!/^[0-9a-f]{16}$/.test(id)) throw new UsageError(`device id must be 16 lowercase hex characters, got "${id}"`)
  return id
}

export function telemetryCommands (cli: CliRegistry): void {
  const telemetry = cli.program.command('telemetry').description('device telemetry: the ingest server and its data')
  gatewayCommand(cli)
  otaCommands(cli)

  telemetry.command('serve')
    .description('run the server with only the telemetry plugins (same as BERTH_PLUGINS=ingest berth server)')
    .option('-d, --detach', 'start in the background')
    .option('--elf-dir <dir>', 'directory for uploaded ELF files')
    .action(async (options: { detach?: boolean, elfDir?: string }) => {
      process.env.BERTH_PLUGINS = TELEMETRY_PLUGINS.join(',')
      if (options.elfDir !== undefined) process.env.ELF_DIR = options.elfDir
      // Parsed again as `berth server`: with the global options given (-c, -s), which a new parse would drop.
      await cli.program.parseAsync([...await cli.globalArgs(), 'server', ...(options.detach === true ? ['--detach'] : [])], { from: 'user' })
    })

  telemetry.command('report')
    .description('fleet summary: devices, online and offline, and each device’s last contact')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const devices = await allPages<Device>(await telemetryClient(cli), '/devices', 'devices')
      const offline = devices.filter(d => d.offline).length
      if (options.json === true) {
        console.log(JSON.stringify({ devices: devices.length, online: devices.length - offline, offline, fleet: devices }, null, 2))
        return
      }
      console.log(`${devices.length} device(s): ${devices.length - offline} online, ${offline} offline`)
      console.log(formatTable(['DEVICE', 'NAME', 'GROUP', 'SOFTWARE', 'LAST SEEN', 'STATE'], devices.map(d => [
        d.id, d.name, d.group ?? '-', d.software_version ?? '-', when(d.last_seen), d.offline ? 'offline' : 'online'
      ])))
    })

  telemetry.command('faults <device>')
    .description('fault records of one device, newest last')
    .option('--json', 'print JSON')
    .action(async (device: string, options: { json?: boolean }) => {
      const faults = await allPages<StoredFault>(await telemetryClient(cli), `/devices/${checkDevice(device)}/faults`, 'items')
      if (options.json === true) {
        console.log(JSON.stringify(faults, null, 2))
        return
      }
      console.log(formatTable(['RECEIVED', 'PC', 'LR', 'CFSR', 'SYMBOL'], faults.map(f => [when(f.received_at), hex(f.pc), hex(f.lr), hex(f.cfsr), f.symbol ?? '-'])))
    })

  telemetry.command('metrics <device>')
    .description('metric entries of one device')
    .option('--kind <kind>', 'gauge, increment or observe')
    .option('--since <time>', 'ISO 8601 time or milliseconds since the epoch')
    .option('--json', 'print JSON')
    .action(async (device: string, options: { kind?: string, since?: string, json?: boolean }) => {
      const query = new URLSearchParams()
      if (options.kind !== undefined) query.set('kind', options.kind)
      if (options.since !== undefined) query.set('from', options.since)
      const path = `/devices/${checkDevice(device)}/metrics${query.size > 0 ? `?${query.toString()}` : ''}`
      const metrics = await allPages<StoredMetric>(await telemetryClient(cli), path, 'items')
      if (options.json === true) {
        console.log(JSON.stringify(metrics, null, 2))
        return
      }
      console.log(formatTable(['RECEIVED', 'KEY', 'KIND', 'VALUE'], metrics.map(m => [when(m.received_at), m.key, m.kind, String(m.value)])))
    })

  telemetry.command('migrate')
    .description('copy the telemetry of this state directory\'s embedded store into PostgreSQL (then set [ingest].database_url to it); run again to copy what came since: rows there already are kept')
    .requiredOption('--to <url>', 'the database: postgres://user:password@host:5432/database')
    .option('--elf-dir <dir>', 'where the uploaded ELF files are (default: ELF_DIR, or <state_dir>/elf)')
    .action(async (options: { to: string, elfDir?: string }) => {
      if (!/^postgres(ql)?:\/\//.test(options.to) || !URL.canParse(options.to)) throw new UsageError(`--to ${options.to.replace(/:[^:@/]*@/, ':***@')}: give a postgres:// URL`)
      const { stateDir } = await cli.settings()
      const { migrateTelemetry } = await import('./storage/copy.js')
      const elfDir = resolve(options.elfDir ?? process.env.ELF_DIR ?? join(stateDir, 'elf'))
      const report = await migrateTelemetry(stateDir, options.to, elfDir, line => { console.log(line) })
      console.log(`copied ${Object.values(report).reduce((n, rows) => n + rows, 0)} row(s); set [ingest].database_url (or INGEST_DATABASE_URL) to use them`)
    })

  telemetry.command('hash-password')
    .description('read a password on standard input and print its hash for [ingest].users')
    .action(async () => {
      const chunks: Buffer[] = []
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
      const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
      if (password === '') throw new UsageError('no password on standard input')
      const { hashPassword } = await import('./auth/passwords.js')
      console.log(hashPassword(password))
    })
}


/** `berth gateway`: the bridge from devices on serial lines, USB and BLE to the telemetry server (gateway/). */
function gatewayCommand (cli: CliRegistry): void {
  cli.program.command('gateway')
    .description('bridge devices on serial lines, USB serial devices and BLE (where the host has an adapter) to the telemetry server, spooling to disk while it is unreachable')
    .option('--serial <line>', 'a serial line: tcp:HOST:PORT, or a tty path with an optional @baud (/dev/ttyUSB0@115200); repeatable', (value: string, all: string[]) => [...all, value], [])
    .option('--url <url>', 'the telemetry server (default: the telemetry listener of the settings, or BERTH_TELEMETRY_URL)')
    .option('--api-key <key>', 'the device key (default: INGEST_API_KEY, or <state_dir>/ingest-api-key)')
    .option('--spool <dir>', 'where frames wait for the server (default: <state_dir>/gateway-spool)')
    .option('--spool-max <MiB>', 'most frames kept waiting for the server, in MiB (the oldest are dropped and counted past it; frames refused for now get a quarter more)', '64')
    .option('--no-usb', 'do not bridge USB serial devices (by default every device in /dev/serial/by-id is read, as they come and go)')
    .option('--usb-dir <dir>', 'where USB serial devices appear', USB_BY_ID)
    .option('--usb-baud <baud>', 'baud rate of USB serial devices', '115200')
    .option('--no-ble', 'do not bridge BLE devices (by default, devices offering the Berth GATT service are found through BlueZ)')
    .option('--metrics <host:port>', 'serve Prometheus metrics of the gateway at http://HOST:PORT/metrics')
    .action(async (options: { serial: string[], url?: string, apiKey?: string, spool?: string, spoolMax: string, usb: boolean, usbDir: string, usbBaud: string, ble: boolean, metrics?: string }) => {
      const { parseSerial } = await import('./gateway/sources.js')
      const serials = options.serial.map(parseSerial)
      if (serials.length === 0 && !options.ble && !options.usb) throw new UsageError('give at least one --serial line, or leave USB or BLE on')
      const spoolMax = Number(options.spoolMax)
      if (!Number.isFinite(spoolMax) || spoolMax <= 0) throw new UsageError(`--spool-max ${options.spoolMax}: give a positive number of MiB`)
      const usbBaud = Number(options.usbBaud)
      if (!Number.isInteger(usbBaud) || usbBaud <= 0) throw new UsageError(`--usb-baud ${options.usbBaud}: give a positive whole number`)
      const metrics = options.metrics === undefined ? undefined : /^(.+):(\d+)$/.exec(options.metrics)
      if (metrics === null || (metrics !== undefined && Number(metrics[2]) > 65535)) throw new UsageError(`--metrics ${options.metrics ?? ''}: give HOST:PORT (127.0.0.1:9108)`)
      const { urls, stateDir } = await cli.settings()
      const keyFile = join(stateDir, 'ingest-api-key')
      const apiKey = options.apiKey ?? process.env.INGEST_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined)
      if (apiKey === undefined || apiKey === '') throw new UsageError(`no device key: pass --api-key, set INGEST_API_KEY, or run on the server host (${keyFile} does not exist)`)
      if (options.url !== undefined && !URL.canParse(options.url)) throw new UsageError(`--url ${options.url} is not a URL`)
      const { runGateway } = await import('./gateway/gateway.js')
      const stopped = new Promise<void>(resolve => { process.once('SIGINT', () => { resolve() }); process.once('SIGTERM', () => { resolve() }) })
      await runGateway({
        serials,
        url: options.url !== undefined ? new URL(options.url) : urls.telemetry,
        apiKey,
        spoolDir: resolve(options.spool ?? join(stateDir, 'gateway-spool')),
        spoolMaxBytes: Math.floor(spoolMax * 1024 * 1024),
        ble: options.ble,
        usbDir: options.usb ? options.usbDir : undefined,
        usbBaud,
        metrics: metrics === undefined ? undefined : { host: metrics[1].replace(/^\[(.*)\]$/, '$1'), port: Number(metrics[2]) },
        log: line => { console.log(`gateway: ${line}`) }
      }, stopped)
    })
}
