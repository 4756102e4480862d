// Logs of several replicas as one plain-text stream of whole lines, each prefixed with its container's
// name when there is more than one. In order (replica after replica) for a snapshot; interleaved as
// lines arrive when following. The result ends when every source has ended.
import { PassThrough, type Readable } from 'node:stream'

export interface LogSource {
  label: string
  stream: NodeJS.ReadableStream
}

export function mergeLogs (sources: readonly LogSource[], options: { interleave: boolean }): PassThrough {
  const out = new PassThrough()
  const prefix = sources.length > 1
  const relay = ({ label, stream }: LogSource, ended: () => void): void => {
    let partial = ''
    const emit = (text: string): void => { out.write(prefix ? `${label} | ${text}` : text) }
    stream.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) emit(`${line}\n`)
    })
    stream.on('end', () => {
      if (partial !== '') emit(`${partial}\n`)
      ended()
    })
    stream.on('error', err => { out.destroy(err) })
  }
  if (options.interleave) {
    let open = sources.length
    for (const source of sources) relay(source, () => { if (--open === 0) out.end() })
  } else {
    const next = (i: number): void => {
      if (i === sources.length) out.end()
      else relay(sources[i], () => { next(i + 1) })
    }
    next(0)
  }
  out.on('close', () => {
    for (const { stream } of sources) (stream as Readable).destroy()
  })
  return out
}
