// Bounded fuzzing of the untrusted-input decoders (parseFrames, rleDecode) with random and mutated inputs:
// no throw, records within bounds and tiling the body, errors reported, WASM identical to the reference.
import t from 'tap'
import fc from 'fast-check'
import { createCodecs, encodeFrame, FRAME_MAX_RECORDS, FRAME_STATUSES } from '../../wasm/index.js'
import type { FrameIndex } from '../../wasm/index.js'

const wasm = createCodecs({ backend: 'wasm' })
const reference = createCodecs({ backend: 'reference' })

const frameArb = fc.record({
  type: fc.integer({ min: 0, max: 8 }),
  flags: fc.constantFrom(0, 1, 2, 4, 7, 8),
  fragmentIndex: fc.integer({ min: 0, max: 3 }),
  fragmentCount: fc.constantFrom(0, 0, 2, 3),
  deviceId: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  sequence: fc.nat(),
  payload: fc.uint8Array({ maxLength: 120 }),
}).map(encodeFrame)

type Mutation = { kind: 'flip'; at: number; bit: number } | { kind: 'cut'; at: number } | { kind: 'insert'; at: number; bytes: Uint8Array }
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
)

function mutate(body: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let out = Uint8Array.from(body)
  for (const m of mutations) {
    if (out.length === 0) break
    const at = m.at % out.length
    if (m.kind === 'flip') out[at] ^= 1 << m.bit
    else if (m.kind === 'cut') out = out.subarray(0, at)
    else out = Uint8Array.from([...out.subarray(0, at), ...m.bytes, ...out.subarray(at)])
  }
  return out
}

const bodyArb = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }),
  fc.tuple(fc.array(frameArb, { maxLength: 12 }), fc.array(mutationArb, { maxLength: 4 }))
    .map(([frames, mutations]) => mutate(Uint8Array.from(frames.flatMap((f) => [...f])), mutations)),
)

/** Structural invariants every index must satisfy; returns a description of the first violation. */
function violation(body: Uint8Array, index: FrameIndex): string | undefined {
  let expectedStart = 0
  for (const r of index) {
    if (r.start !== expectedStart) return `record starts at ${r.start}, expected ${expectedStart}`
    if (r.end <= r.start || r.end > body.length) return `record span [${r.start}, ${r.end}) out of bounds`
    if (!FRAME_STATUSES.includes(r.status)) return `unknown status ${r.status}`
    if ((r.status === 'ok') !== (r.reason === undefined)) return `reason/status mismatch for ${r.status}`
    if (r.status === 'ok' && r.end !== r.payloadOffset + r.payloadLength + 4) return 'ok record does not end after its CRC'
    expectedStart = r.end
  }
  if (index.consumed !== expectedStart) return `consumed ${index.consumed} != ${expectedStart}`
  if (index.count > FRAME_MAX_RECORDS) return 'too many records'
  if (index.complete !== (index.consumed === body.length)) return 'complete flag wrong'
  return undefined
}

t.test('parseFrames on random and mutated bodies', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(bodyArb, (body) => {
      const index = wasm.parseFrames(body)
      const problem = violation(body, index)
      if (problem !== undefined) throw new Error(problem)
      return index.complete && Buffer.from(index.words.buffer).equals(Buffer.from(reference.parseFrames(body).words.buffer))
    }),
    { numRuns: 600 },
  ))
})

const rleInputArb = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.tuple(fc.uint8Array({ maxLength: 512 }).map((data) => reference.rleEncode(data)), fc.array(mutationArb, { maxLength: 3 }))
    .map(([encoded, mutations]) => mutate(encoded, mutations)),
)

t.test('rleDecode on random and mutated encodings', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(rleInputArb, fc.integer({ min: 0, max: 1024 }), (input, max) => {
      const a = wasm.rleDecode(input, max)
      const b = reference.rleDecode(input, max)
      if (a.ok !== b.ok) return false
      if (a.ok && b.ok) return a.value.length <= max && Buffer.from(a.value).equals(b.value)
      return !a.ok && !b.ok && a.code === b.code && a.reason.length > 0
    }),
    { numRuns: 1500 },
  ))
})
