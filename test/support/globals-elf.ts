// A small ARM image with named globals, for the coredump tests: built with arm-none-eabi-gcc, its .data
// at 0x20000000 holding objects of 1, 2, 4, 8 and 12 bytes (g_u8, g_u16, g_counter, g_u64, g_state).
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const SOURCE = `
unsigned char g_u8 = 1;
unsigned short g_u16 = 2;
unsigned int g_counter = 3;
unsigned long long g_u64 = 4;
struct { int a[3]; } g_state = { { 5, 6, 7 } };
void _start(void) { for (;;) {} }
`

/** Where the image's .data starts. */
export const GLOBALS_DATA = 0x20000000

/** Build the image in `dir` with `compiler`; resolves with its path and bytes. */
export async function buildGlobalsElf (compiler: string, dir: string): Promise<{ path: string, bytes: Buffer }> {
  await writeFile(join(dir, 'globals.c'), SOURCE)
  const path = join(dir, 'globals.elf')
  await promisify(execFile)(compiler, ['-mcpu=cortex-m3', '-mthumb', '-O0', '-nostdlib', '-Wl,--build-id=sha1', '-Wl,-Ttext=0x0', `-Wl,-Tdata=0x${GLOBALS_DATA.toString(16)}`, '-o', path, join(dir, 'globals.c')])
  return { path, bytes: await readFile(path) }
}
