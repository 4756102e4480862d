// The serial lines the gateway reads devices from, and writes update frames back to: a tty or pty path
// with its baud rate, or the TCP endpoint an emulator or a serial server offers. (BLE devices come
// through ble.ts.)
import { execFile } from 'node:child_process'
import { constants, createReadStream, createWriteStream, existsSync, openSync } from 'node:fs'
import { connect } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { isatty, ReadStream, WriteStream } from 'node:tty'
import { promisify } from 'node:util'
import { UsageError } from '../../../kernel/index.js'

const run = promisify(execFile)

export type SerialSpec = { kind: 'tcp', host: string, port: number, label: string } | { kind: 'tty', path: string, baud: number, label: string }

/** `tcp:HOST:PORT` or `PATH[@BAUD]` (115200 by default). */
export function parseSerial (text: string): SerialSpec {
  const tcp = /^tcp:(.+):(\d+)$/.exec(text)
  if (tcp !== null) {
    const port = Number(tcp[2])
    if (port < 1 || port > 65535) throw new UsageError(`--serial ${text}: the port must be 1-65535`)
    return { kind: 'tcp', host: tcp[1], port, label: text }
  }
  const [path, baudText = '115200'] = text.split('@')
  const baud = Number(baudText)
  if (!path.startsWith('/') || !Number.isInteger(baud) || baud <= 0) {
    throw new UsageError(`--serial ${text}: give tcp:HOST:PORT or a device path with an optional @baud (/dev/ttyUSB0@115200)`)
  }
  return { kind: 'tty', path, baud, label: text }
}

/** An open serial line: the bytes it brings, and where bytes for the device go. */
export interface SerialLine {
  input: Readable
  output: Writable
}

/** Open the serial line for reading and writing. */
export async function openSerial (spec: SerialSpec): Promise<SerialLine> {
  if (spec.kind === 'tcp') {
    return await new Promise((resolve, reject) => {
      // No Nagle delay: an update block goes out at once, as the device waits for it to ask for the next.
      const socket = connect({ host: spec.host, port: spec.port, noDelay: true }, () => { socket.off('error', reject); resolve({ input: socket, output: socket }) })
      socket.once('error', reject)
    })
  }
  if (!existsSync(spec.path)) throw new Error(`${spec.path} does not exist`)
  await run('stty', ['-F', spec.path, String(spec.baud), 'raw', '-echo'])
  // A terminal is read through libuv's non-blocking tty handle, which can be closed while a read is
  // waiting; a plain file read would hold a thread-pool thread until the device sends something.
  // Writes go through a descriptor of their own: one tty handle per descriptor.
  const fd = openSync(spec.path, constants.O_RDONLY | constants.O_NOCTTY | constants.O_NONBLOCK)
  const out = openSync(spec.path, constants.O_WRONLY | constants.O_NOCTTY | (isatty(fd) ? constants.O_NONBLOCK : 0))
  const input = isatty(fd) ? new ReadStream(fd) : createReadStream('', { fd })
  const output = isatty(out) ? new WriteStream(out) : createWriteStream('', { fd: out })
  // The line is one: when its reading side ends, so does its writing side.
  input.once('close', () => { output.destroy() })
  return { input, output }
}
