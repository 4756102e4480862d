// Signed updates on the QEMU example (docs/firmware-updates.md): the example's bootloader and
// application built for a fleet key and signed here, QEMU run with the factory image and its UART on a
// TCP connection, and a stand-in for the gateway's side of the "BU" update frames on that connection
// (the real one is `berth gateway`): it reads the device's `state`, `request` and `result` frames,
// answers with what its policy offers and the blocks asked for, and can drop the connection.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createHash, type KeyObject } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { crc32 } from 'node:zlib'
import { FIRMWARE_DIR } from './firmware.js'
import { fleetKey, signImage } from './signed-images.js'

const run = promisify(execFile)

export const EXECUTION = 0x00100000
export const FACTORY = 0x00010000
const TYPE = { state: 1, offer: 2, request: 3, block: 4, result: 5, none: 6 } as const
export const SLOT_STATES = ['empty', 'pending', 'testing', 'confirmed', 'bad'] as const
export const EVENTS = ['none', 'revert', 'refused', 'confirmed'] as const

export interface SlotState { state: string, version: string, sha256: string }
export interface DeviceState {
  device: string
  softwareType: string
  version: string
  running: number
  slots: SlotState[]
  download: { sha256: string, received: number }
  event: string
  eventSlot: number
}
/** A block asked for; `connection` counts the connections so far, `states` the states received before it. */
export interface Request { sha256: string, offset: number, length: number, connection: number, states: number }
export interface Result { sha256: string, status: number }

const text = (bytes: Buffer): string => bytes.toString('utf8').replace(/\0+$/, '')

function parseState (p: Buffer): DeviceState {
  const slot = (at: number): SlotState => ({ state: SLOT_STATES[p[at]] ?? String(p[at]), version: text(p.subarray(at + 1, at + 25)), sha256: p.subarray(at + 25, at + 57).toString('hex') })
  return {
    device: p.subarray(0, 8).toString('hex'),
    softwareType: text(p.subarray(8, 32)),
    version: text(p.subarray(32, 56)),
    running: p[56],
    slots: [slot(57), slot(114)],
    download: { sha256: p.subarray(171, 203).toString('hex'), received: p.readUInt32LE(203) },
    event: EVENTS[p[207]] ?? String(p[207]),
    eventSlot: p[208]
  }
}

/** One "BU" frame of `type` with `payload`. */
export function updateFrame (type: number, payload: Buffer): Buffer {
  const head = Buffer.from([0x42, 0x55, 1, type, payload.length & 0xff, payload.length >> 8])
  const body = Buffer.concat([head, payload])
  const crc = Buffer.alloc(4)
  crc.writeUInt32LE(crc32(body))
  return Buffer.concat([body, crc])
}

/** An image the stand-in serves: its bytes, and the SHA-256 and version it offers them under. */
export interface Offer { image: Buffer, version: string, sha256?: string }

/** The gateway's side of the update frames, on the TCP port QEMU's UART connects to. */
export class UpdateStandin {
  readonly states: DeviceState[] = []
  readonly requests: Request[] = []
  readonly results: Result[] = []
  /** What is not an update frame: the bootloader's lines and the telemetry frames. */
  other = Buffer.alloc(0)
  /** Called with each state: what to offer (undefined: none). */
  policy: (state: DeviceState) => Offer | undefined = () => undefined
  /** Drop the connection once, after this many blocks sent (counted from now). */
  dropAfter: number | undefined
  /** Send this many of the next blocks damaged: after stray bytes, with a CRC that does not match. */
  damage = 0
  connections = 0
  private readonly served = new Map<string, Buffer>()
  private socket: Socket | undefined
  private input = Buffer.alloc(0)
  private blocks = 0

  private constructor (private readonly server: Server, private readonly nodelay: boolean) {}

  /** A stand-in on a free loopback port; `nodelay` false leaves Nagle's algorithm on its writes. */
  static async listen (nodelay = true): Promise<UpdateStandin> {
    const server = createServer()
    const standin = new UpdateStandin(server, nodelay)
    server.on('connection', socket => { standin.attach(socket) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return standin
  }

  get port (): number { return (this.server.address() as { port: number }).port }

  /** The bootloader's lines so far. */
  bootLines (): string[] { return [...this.other.toString('latin1').matchAll(/berth boot: [^\n]*/g)].map(m => m[0]) }

  async close (): Promise<void> {
    this.socket?.destroy()
    await new Promise(resolve => this.server.close(resolve))
  }

  private attach (socket: Socket): void {
    this.socket?.destroy()
    this.socket = socket
    this.connections++
    this.input = Buffer.alloc(0)
    socket.setNoDelay(this.nodelay) // each frame at once, as QEMU's end (nodelay=on) sends each byte
    socket.on('data', data => { this.receive(data) })
    socket.on('error', () => {})
  }

  private receive (data: Buffer): void {
    this.input = Buffer.concat([this.input, data])
    for (;;) {
      const start = this.input.indexOf('BU\x01', 0, 'latin1')
      if (start < 0) {
        this.keepOther(this.input.length - 2)
        return
      }
      if (this.input.length < start + 6) { this.keepOther(start); return }
      const length = this.input.readUInt16LE(start + 4)
      if (length > 548) { this.keepOther(start + 1); continue }
      if (this.input.length < start + 10 + length) { this.keepOther(start); return }
      const end = start + 6 + length
      if (crc32(this.input.subarray(start, end)) !== this.input.readUInt32LE(end)) { this.keepOther(start + 1); continue }
      this.keepOther(start)
      this.frame(this.input[3], this.input.subarray(6, 6 + length))
      this.input = this.input.subarray(10 + length)
    }
  }

  /** Move the first `n` bytes of the input to `other`. */
  private keepOther (n: number): void {
    if (n <= 0) return
    this.other = Buffer.concat([this.other, this.input.subarray(0, n)])
    this.input = this.input.subarray(n)
  }

  private send (type: number, payload: Buffer): void {
    this.socket?.write(updateFrame(type, payload))
  }

  private frame (type: number, payload: Buffer): void {
    if (type === TYPE.state) {
      const state = parseState(payload)
      this.states.push(state)
      const offer = this.policy(state)
      if (offer === undefined) { this.send(TYPE.none, Buffer.alloc(0)); return }
      const sha256 = offer.sha256 ?? createHash('sha256').update(offer.image).digest('hex')
      this.served.set(sha256, offer.image)
      const body = Buffer.alloc(60)
      Buffer.from(sha256, 'hex').copy(body)
      body.writeUInt32LE(offer.image.length, 32)
      body.write(offer.version, 36, 24, 'utf8')
      this.send(TYPE.offer, body)
    } else if (type === TYPE.request) {
      const request = { sha256: payload.subarray(0, 32).toString('hex'), offset: payload.readUInt32LE(32), length: payload.readUInt16LE(36), connection: this.connections, states: this.states.length }
      this.requests.push(request)
      const image = this.served.get(request.sha256)
      if (image === undefined) return
      if (this.dropAfter !== undefined && this.blocks >= this.dropAfter) {
        this.dropAfter = undefined
        this.socket?.destroy()
        return
      }
      this.blocks++
      const head = Buffer.alloc(36)
      Buffer.from(request.sha256, 'hex').copy(head)
      head.writeUInt32LE(request.offset, 32)
      const block = updateFrame(TYPE.block, Buffer.concat([head, image.subarray(request.offset, request.offset + request.length)]))
      if (this.damage > 0) {
        this.damage--
        block[block.length - 1] ^= 0xff
        this.socket?.write(Buffer.concat([Buffer.from('BBU\x02noise BU\x01\x07\xff\xff', 'latin1'), block]))
        return
      }
      this.socket?.write(block)
    } else if (type === TYPE.result) {
      this.results.push({ sha256: payload.subarray(0, 32).toString('hex'), status: payload[32] })
    }
  }
}

/** The example built for a fleet key, and its payloads signed as images of any version. */
export interface UpdatableBuild {
  dir: string
  bootloader: string
  privateKey: KeyObject
  /** The payload built with `variant`'s options (e.g. -DQEMU_UPDATABLE_HANG), signed as `version`. */
  image: (version: string, variant?: string, key?: KeyObject) => Promise<Buffer>
}

/** Build the bootloader and application in `dir` for a new fleet key. */
export async function buildUpdatable (dir: string): Promise<UpdatableBuild> {
  const fleet = fleetKey()
  const keyFile = join(dir, 'fleet.pub')
  await writeFile(keyFile, fleet.publicRaw.toString('hex') + '\n')
  const built = new Map<string, Buffer>()
  const payload = async (variant: string): Promise<Buffer> => {
    const cached = built.get(variant)
    if (cached !== undefined) return cached
    const out = join(dir, variant === '' ? 'default' : variant.replace(/[^A-Za-z0-9]+/g, '_'))
    await run('make', ['-j2', '-C', FIRMWARE_DIR, 'qemu-updatable', `OUT=${out}`, `CFLAGS_EXTRA=${variant}`, `FLEET_KEY=${keyFile}`], { maxBuffer: 8 << 20 })
    const bytes = await readFile(join(out, 'qemu-updatable.bin'))
    built.set(variant, bytes)
    return bytes
  }
  await payload('')
  return {
    dir,
    bootloader: join(dir, 'default', 'bootloader.elf'),
    privateKey: fleet.privateKey,
    image: async (version, variant = '', key = fleet.privateKey) =>
      signImage(await payload(variant), { version, softwareType: 'qemu-updatable', loadAddress: EXECUTION }, key)
  }
}

/**
 * QEMU running the bootloader with the factory image in `factoryFile`, its UART connected to `port`
 * (`nodelay` false: QEMU's writes wait under Nagle's algorithm); `reset()` resets the board from QEMU's monitor.
 */
export async function runUpdatable (bootloader: string, factoryFile: string, port: number, nodelay = true): Promise<{ qemu: ChildProcess, reset: () => Promise<void> }> {
  const monitor = `${factoryFile}.monitor`
  const qemu = spawn('qemu-system-arm', ['-M', 'mps2-an385', '-nographic', '-monitor', `unix:${monitor},server=on,wait=off`,
    '-semihosting-config', 'enable=on,target=native', '-kernel', bootloader,
    '-device', `loader,file=${factoryFile},addr=0x${FACTORY.toString(16)}`, '-serial', `tcp:127.0.0.1:${port},reconnect=1${nodelay ? ',nodelay=on' : ''}`], { stdio: ['ignore', 'ignore', 'inherit'] })
  const reset = async (): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      const socket = createConnection(monitor, () => { socket.end('system_reset\n') })
      socket.on('error', reject)
      socket.on('close', () => { resolve() })
      socket.resume()
    })
  }
  return { qemu, reset }
}
