// Backend selection: the default instance uses WASM; a missing or broken module falls back to the reference.
import t from 'tap'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { codecs, createCodecs, defaultWasmPath } from '../../wasm/index.js'
import { packageRoot } from '../../wasm/locate.js'
import { makeCodecs } from '../../wasm/codecs.js'
import { referenceEngine } from '../../wasm/reference.js'

const check = new TextEncoder().encode('123456789')

t.test('the import-time instance runs on WASM', async (t) => {
  t.equal(codecs.fallbackReason, undefined, 'no fallback (run `npm run build:wasm` if this fails)')
  t.equal(codecs.backend, 'wasm')
  t.equal(codecs.crc32(check), 0xcbf43926)
})

t.test('the debug build computes the same results as the release build', async (t) => {
  const debug = createCodecs({ backend: 'wasm', wasmPath: defaultWasmPath().replace(/berth\.wasm$/, 'berth.debug.wasm') })
  const input = Uint8Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? 0 : i & 0xff))
  t.equal(debug.crc32(input), codecs.crc32(input))
  t.same([...debug.rleEncode(input)], [...codecs.rleEncode(input)])
  const key = new Uint8Array(16).fill(7)
  const nonce = new Uint8Array(13).fill(9)
  t.same([...debug.ccmSeal(key, nonce, input.subarray(0, 8), input)], [...codecs.ccmSeal(key, nonce, input.subarray(0, 8), input)])
})

t.test('a missing module falls back to the reference and says why', async (t) => {
  const missing = join(t.testdir(), 'missing.wasm')
  const fallback = createCodecs({ wasmPath: missing })
  t.equal(fallback.backend, 'reference')
  t.match(fallback.fallbackReason, /cannot read .*missing\.wasm.*npm run build:wasm/)
  t.equal(fallback.crc32(check), 0xcbf43926, 'reference codecs work')
  t.throws(() => createCodecs({ backend: 'wasm', wasmPath: missing }), /cannot read .*missing\.wasm/)
})

t.test('a corrupt module falls back too', async (t) => {
  const dir = t.testdir({ 'berth.wasm': 'not a wasm module' })
  const fallback = createCodecs({ wasmPath: join(dir, 'berth.wasm') })
  t.equal(fallback.backend, 'reference')
  t.match(fallback.fallbackReason, /WASM codecs unavailable/)
})

t.test('backend: reference skips the module entirely', async (t) => {
  const reference = createCodecs({ backend: 'reference', wasmPath: '/nonexistent/berth.wasm' })
  t.equal(reference.backend, 'reference')
  t.equal(reference.fallbackReason, undefined)
})

t.test('module location: BERTH_WASM_DIR, else wasm/build under the package root', async (t) => {
  t.equal(defaultWasmPath({ BERTH_WASM_DIR: '/opt/berth/wasm' }), join('/opt/berth/wasm', 'berth.wasm'))
  const root = packageRoot(dirname(fileURLToPath(import.meta.url)))
  t.ok(root !== undefined && existsSync(join(root, 'package.json')))
  t.equal(defaultWasmPath({}), join(root ?? '', 'wasm', 'build', 'berth.wasm'))
  t.equal(defaultWasmPath({ BERTH_WASM_DIR: '' }), defaultWasmPath({}), 'an empty override is ignored')
  t.equal(packageRoot('/'), existsSync('/package.json') ? '/' : undefined, 'the search stops at the filesystem root')
})

t.test('an engine returning an undefined RLE status is a bug, not a result', async (t) => {
  const broken = makeCodecs({ ...referenceEngine, rleDecode: () => -99 }, 'reference')
  t.throws(() => broken.rleDecode(new Uint8Array(1), 1), /unknown code -99/)
})
