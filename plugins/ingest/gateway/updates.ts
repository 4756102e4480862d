// Firmware updates through the gateway (docs/firmware-updates.md): each serial line's update frames
// are answered by an UpdateSession. A device's `state` is reported to the server (POST /ota/status) and
// answered with an `offer` of what GET /ota/update has for it, or `none`; its `request`s are answered
// with `block`s of the image, fetched from the server by HTTP range requests a window at a time and
// kept in a bounded cache shared by the lines; its `result` is reported. The device drives and its
// requests carry their offsets, so a gateway that restarts simply serves the next request.
import { request } from 'undici'
import { BLOCK_MAX, decodeUpdate, encodeUpdate, type DeviceState, type DownloadResult, type Offer, type UpdateMessage } from './update-frames.js'

const REQUEST_TIMEOUT_MS = 30_000
/** Bytes fetched from the server at a time, from the offset a device asks for. */
const WINDOW_BYTES = 64 * 1024
/** Windows kept (the least recently used go first): 2 MiB. */
const WINDOWS_KEPT = 32

interface Window { image: string, start: number, bytes: Buffer }

/** The server's side of updates, with the gateway's key: offers, reports, and the images' bytes. */
export class UpdateServer {
  readonly #windows: Window[] = []

  constructor (readonly url: URL, readonly apiKey: string) {}

  async #call (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number, body: Buffer }> {
    const target = new URL(path, this.url)
    let response
    try {
      response = await request(target, { method, body, headers: { 'x-api-key': this.apiKey, ...headers }, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS })
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? ''
      throw new Error(`${target.origin} unreachable (${code !== '' ? code : (err as Error).message})`)
    }
    return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) }
  }

  /** What the server offers the device, or undefined. */
  async offer (device: string): Promise<Offer | undefined> {
    const { status, body } = await this.#call('GET', `/ota/update?device=${device}`)
    if (status === 204) return undefined
    if (status !== 200) throw new Error(`GET /ota/update answered ${status}: ${body.toString('utf8').slice(0, 200)}`)
    const offer = JSON.parse(body.toString('utf8')) as { sha256: string, size: number, version: string }
    return { image: offer.sha256, size: offer.size, version: offer.version }
  }

  /** POST /ota/status; returns the kinds the server recorded and the releases it halted. */
  async report (body: object): Promise<{ recorded: string[], halted: string[] }> {
    const { status, body: answer } = await this.#call('POST', '/ota/status', { 'content-type': 'application/json' }, JSON.stringify(body))
    if (status !== 200) throw new Error(`POST /ota/status answered ${status}: ${answer.toString('utf8').slice(0, 200)}`)
    return JSON.parse(answer.toString('utf8')) as { recorded: string[], halted: string[] }
  }

  /** `length` bytes of `image` from `offset` (fewer at its end, none past it), for `device`. */
  async bytes (image: string, offset: number, length: number, device: string | undefined): Promise<Buffer> {
    const kept = this.#windows.findIndex(w => w.image === image && offset >= w.start && (offset + length <= w.start + w.bytes.length || w.bytes.length < WINDOW_BYTES))
    let window = kept >= 0 ? this.#windows.splice(kept, 1)[0] : undefined
    if (window === undefined) {
      const { status, body } = await this.#call('GET', `/ota/images/${image}/download${device === undefined ? '' : `?device=${device}`}`, { range: `bytes=${offset}-${offset + WINDOW_BYTES - 1}` })
      if (status === 416) return Buffer.alloc(0)
      if (status !== 206 && status !== 200) throw new Error(`the download of ${image.slice(0, 12)} answered ${status}: ${body.toString('utf8').slice(0, 200)}`)
      window = status === 206 ? { image, start: offset, bytes: body } : { image, start: 0, bytes: body }
    }
    this.#windows.push(window)
    if (this.#windows.length > WINDOWS_KEPT) this.#windows.shift()
    const from = offset - window.start
    return window.bytes.subarray(from, from + length)
  }
}

/** One line's update conversation: frames in, in order; answers written back to the line. */
export class UpdateSession {
  /** The device of the line's last `state`: a `result` names no device. */
  #device: string | undefined
  /** Where the last block served ended, to say when a device starts or resumes a download. */
  #servedTo: number | undefined
  #queue: Promise<void> = Promise.resolve()

  constructor (readonly server: UpdateServer, readonly write: (frame: Buffer) => void, readonly log: (line: string) => void) {}

  /** A frame off the line (CRC checked); handled after the ones before it. */
  take (frame: Buffer): void {
    this.#queue = this.#queue.then(async () => { await this.#handle(frame) }).catch((err: unknown) => { this.log(`update ${this.#device ?? '(no device yet)'}: ${(err as Error).message}`) })
  }

  /** Resolves once every frame taken so far is handled. */
  async idle (): Promise<void> {
    await this.#queue
  }

  #send (message: UpdateMessage): void {
    this.write(encodeUpdate(message))
  }

  async #handle (frame: Buffer): Promise<void> {
    const message = decodeUpdate(frame)
    if (message.type === 'state') await this.#state(message.state)
    else if (message.type === 'request') await this.#request(message.request.image, message.request.offset, message.request.length)
    else if (message.type === 'result') await this.#result(message.result)
    else this.log(`update: a device sent a ${message.type} frame, which only the gateway sends; ignored`)
  }

  async #state (state: DeviceState): Promise<void> {
    this.#device = state.device
    const label = `update ${state.device}`
    try {
      const answer = await this.server.report({
        device: state.device,
        running_slot: state.runningSlot,
        slots: state.slots.map((slot, index) => ({ slot: index, ...slot })),
        download: state.download,
        event: state.event
      })
      for (const release of answer.halted) this.log(`${label}: its revert halted release ${release}`)
    } catch (err) {
      this.log(`${label}: its state was not reported (${(err as Error).message})`)
    }
    let offer: Offer | undefined
    try {
      offer = await this.server.offer(state.device)
    } catch (err) {
      this.log(`${label}: no offer (${(err as Error).message})`)
    }
    if (offer === undefined) {
      this.#send({ type: 'none' })
      return
    }
    this.log(`${label}: offered ${offer.version} (${offer.size} bytes, sha256 ${offer.image.slice(0, 12)})${state.download?.image === offer.image ? `, it has ${state.download.received} bytes of it` : ''}`)
    this.#send({ type: 'offer', offer })
  }

  async #request (image: string, offset: number, length: number): Promise<void> {
    const bytes = await this.server.bytes(image, offset, Math.min(length, BLOCK_MAX), this.#device)
    if (offset !== this.#servedTo) this.log(`update ${this.#device ?? '(no device yet)'}: serving ${image.slice(0, 12)} from byte ${offset}`)
    this.#servedTo = offset + bytes.length
    this.#send({ type: 'block', block: { image, offset, bytes } })
  }

  async #result (result: DownloadResult): Promise<void> {
    if (this.#device === undefined) {
      this.log(`update: a download result (${result.status}) before any state on this line; not reported`)
      return
    }
    this.log(`update ${this.#device}: download of ${result.image.slice(0, 12)}: ${result.status}`)
    await this.server.report({ device: this.#device, result })
  }
}
