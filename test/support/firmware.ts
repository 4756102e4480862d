// The firmware SDK for tests: host builds with gcc (its Makefile) and the configurations of its size
// table, the golden vectors turned into C records for test/vectors.c, and TAP-like output of the C
// test programs turned into assertions.
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ensureDebianPackages } from './component.js'

export const FIRMWARE_DIR = fileURLToPath(new URL('../../firmware/', import.meta.url))
export const VECTOR_DIR = fileURLToPath(new URL('../vectors/', import.meta.url))
const run = promisify(execFile)

export interface VectorJson {
  name: string
  sequence: number
  type: string
  type_code: number
  flags: number
  mtu?: number
  serialized: string
  record: Record<string, unknown>
}

/** gcc and make (Debian's build-essential parts), installed when missing; resolves with the compiler. */
export async function hostToolchain (): Promise<string> {
  await ensureDebianPackages(['gcc', 'make', 'libc6-dev'])
  return 'gcc'
}

/** Debian's ARM toolchain and QEMU (about 1.5 minutes and 3 GB the first time); resolves with the compiler. */
export async function armToolchain (): Promise<string> {
  await ensureDebianPackages(['gcc-arm-none-eabi', 'binutils-arm-none-eabi', 'libnewlib-arm-none-eabi', 'qemu-system-arm', 'make'])
  return 'arm-none-eabi-gcc'
}

/** `make -j2 <target> OUT=<out> CFLAGS_EXTRA=...` in firmware/ (two compilers at a time). */
export async function make (target: string, out: string, extra = ''): Promise<void> {
  await run('make', ['-j2', '-C', FIRMWARE_DIR, target, `OUT=${out}`, `CFLAGS_EXTRA=${extra}`], { maxBuffer: 8 << 20 })
}

/** A configuration of the size table (firmware/Makefile, `make configurations`). */
export interface FirmwareConfiguration {
  name: string
  /** Whether the QEMU example links in it (the port has every function its options ask for). */
  arm: boolean
  /** Its -D flags, for CFLAGS_EXTRA ('' for the defaults). */
  options: string
}

export async function configurations (): Promise<FirmwareConfiguration[]> {
  const { stdout } = await run('make', ['-s', '--no-print-directory', '-C', FIRMWARE_DIR, 'configurations'])
  return stdout.trim().split('\n').map(line => {
    const [name, builds, options] = line.split('\t')
    return { name, arm: builds.split(' ').includes('arm'), options }
  })
}

/** Each `ok - name` / `not ok - name` line of a C test program's output. */
export function tapLines (output: string): Array<{ ok: boolean, name: string }> {
  return output.split('\n').flatMap(line => {
    const match = /^(not )?ok(?: \d+)? - (.*)$/.exec(line)
    return match === null ? [] : [{ ok: match[1] === undefined, name: match[2] }]
  })
}

export function vectors (): VectorJson[] {
  return readdirSync(VECTOR_DIR).filter(f => f.endsWith('.json')).map(f => JSON.parse(readFileSync(join(VECTOR_DIR, f), 'utf8')) as VectorJson)
}

const REBOOT = ['unknown', 'power_on', 'pin_reset', 'software_reset', 'watchdog', 'hard_fault', 'brown_out', 'assert', 'firmware_update', 'low_power']
const KIND = ['gauge', 'increment', 'observe']
const ENCODER: Record<string, string> = {
  DeviceInfo: 'berth_encode_device_info', RebootReason: 'berth_encode_reboot_reason', FaultRecord: 'berth_encode_fault_record',
  Metrics: 'berth_encode_metrics', Trace: 'berth_encode_trace', Heartbeat: 'berth_encode_heartbeat'
}

/** A C initializer of the vector's record, declared as `r<i>` (with `e<i>`, `d<i>` for its arrays). */
function record (v: VectorJson, i: number): string {
  const r = v.record
  const s = (value: unknown): string => JSON.stringify(value)
  const n = (value: unknown): string => String(value as number)
  const entries = (r.entries ?? []) as Array<Record<string, unknown>>
  switch (v.type) {
    case 'DeviceInfo': return `static const berth_device_info_t r${i} = { ${s(r.serial)}, ${s(r.hardware_version)}, ${s(r.software_type)}, ${s(r.software_version)}, ${s(r.build_id)} };`
    case 'RebootReason': return `static const berth_reboot_t r${i} = { ${REBOOT.indexOf(String(r.reason))}, ${n(r.boot_count)}, ${n(r.pc)}u, ${n(r.lr)}u };`
    case 'FaultRecord': {
      const stack = Buffer.from(String(r.stack), 'hex')
      const words = Array.from({ length: stack.length / 4 }, (_, w) => `0x${stack.readUInt32LE(4 * w).toString(16)}u`)
      return `static const berth_fault_t r${i} = { ${['pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar'].map(k => `.${k} = ${n(r[k])}u`).join(', ')}, ` +
        `.uptime_ms = ${n(r.uptime_ms)}, .stack_words = ${words.length}, .stack = { ${words.join(', ')} } };`
    }
    case 'Metrics': return `static const berth_metric_t e${i}[] = { ${entries.map(e => `{ ${s(e.key)}, ${KIND.indexOf(String(e.kind))}, ${n(e.value)}, ${n(e.uptime_ms)} }`).join(', ')} };\n` +
      `static const berth_metrics_t r${i} = { ${n(r.uptime_ms)}, e${i}, ${entries.length} };`
    case 'Trace': {
      const data = Buffer.from(String(r.data), 'hex')
      return `static const uint8_t d${i}[] = { ${[...data].map(b => `0x${b.toString(16)}`).join(', ')} };\n` +
        `static const berth_trace_t r${i} = { ${n(r.uptime_ms)}, ${n(r.dropped)}, d${i}, ${data.length} };`
    }
    default: return `static const berth_heartbeat_t r${i} = { ${n(r.uptime_ms)}, ${n(r.boot_count)} };`
  }
}

/** Write vectors_data.c for the Avro vectors (CBOR ones differ in encoding only, and are checked by decoding). */
export function writeVectorData (file: string): VectorJson[] {
  const chosen = vectors().filter(v => (v.flags & 0x04) === 0).sort((a, b) => a.sequence - b.sequence)
  const frames = (v: VectorJson): string => readFileSync(join(VECTOR_DIR, `${v.name}.hex`), 'utf8').replace(/\s/g, '')
  writeFileSync(file, [
    '// Generated from test/vectors/*.json by test/support/firmware.ts.',
    '#include "vectors.h"',
    ...chosen.map(record),
    'const vector_t VECTORS[] = {',
    ...chosen.map((v, i) => `  { ${JSON.stringify(v.name)}, ${v.type_code}, ${v.flags}, ${v.sequence}u, ${v.mtu ?? 0}, ${ENCODER[v.type]}, &r${i}, ${JSON.stringify(frames(v))}, ${JSON.stringify(v.serialized)} },`),
    '};',
    `const size_t VECTOR_COUNT = ${chosen.length};`,
    ''
  ].join('\n'))
  return chosen
}
