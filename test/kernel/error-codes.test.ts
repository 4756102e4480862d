// Error codes as data: each code is declared once (kernel/errors.ts, a plugin's errors.ts) with its
// status and meaning, listed in docs/api.md with the same status, and written nowhere else as a literal.
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Conflict, errorCodes, KERNEL_CODES, type ErrorCode } from '../../kernel/errors.js'

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)))
const CODE = /^BERTH_[A-Z0-9_]+$/

/** The declaration modules: the kernel's and every plugin's errors.ts. */
const DECLARATION_FILES = ['kernel/errors.ts', ...readdirSync(join(ROOT, 'plugins'))
  .map(name => `plugins/${name}/errors.ts`)
  .filter(file => existsSync(join(ROOT, file)))]

function isErrorCode (value: unknown): value is ErrorCode {
  const candidate = value as Partial<ErrorCode> | null
  return typeof candidate?.code === 'string' && typeof candidate.status === 'number' && typeof candidate.meaning === 'string'
}

/** Every declared code with the module that declares it. */
async function declared (): Promise<Array<ErrorCode & { file: string }>> {
  const found: Array<ErrorCode & { file: string }> = []
  for (const file of DECLARATION_FILES) {
    const module = await import(pathToFileURL(join(ROOT, file)).href) as Record<string, unknown>
    for (const [name, value] of Object.entries(module)) {
      if (!name.endsWith('_CODES') || typeof value !== 'object' || value === null) continue
      for (const code of Object.values(value)) if (isErrorCode(code)) found.push({ ...code, file })
    }
  }
  return found
}

/** The rows of docs/api.md's Error codes tables: code and status. */
function documented (): Map<string, number[]> {
  const text = readFileSync(join(ROOT, 'docs/api.md'), 'utf8')
  const section = text.slice(text.indexOf('\n## Error codes\n'), text.indexOf('\n## ', text.indexOf('\n## Error codes\n') + 1))
  const rows = new Map<string, number[]>()
  for (const match of section.matchAll(/^\| `(BERTH_[A-Z0-9_]+)` \| (\d{3}) \|/gm)) {
    rows.set(match[1], [...rows.get(match[1]) ?? [], Number(match[2])])
  }
  return rows
}

/** Environment variables named BERTH_…, as docs/configuration.md and the plugins' READMEs list them. */
function environmentVariables (): Set<string> {
  const docs = ['docs/configuration.md', ...readdirSync(join(ROOT, 'plugins')).map(name => `plugins/${name}/README.md`)]
  const names = new Set<string>()
  for (const doc of docs.filter(file => existsSync(join(ROOT, file)))) {
    for (const match of readFileSync(join(ROOT, doc), 'utf8').matchAll(/\bBERTH_[A-Z0-9_]+\b/g)) names.add(match[0])
  }
  return names
}

function sourceFiles (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter(entry => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map(entry => relative(ROOT, join(entry.parentPath, entry.name)))
}

/** Each quoted BERTH_… string in the sources of plugins/ and kernel/ outside the declaration modules. */
function literals (): Array<{ file: string, line: number, text: string }> {
  const found: Array<{ file: string, line: number, text: string }> = []
  for (const file of [...sourceFiles('kernel'), ...sourceFiles('plugins')]) {
    if (DECLARATION_FILES.includes(file)) continue
    readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
      for (const match of line.matchAll(/(['"`])(BERTH_[A-Z0-9_]+)\1/g)) found.push({ file, line: i + 1, text: match[2] })
    })
  }
  return found
}

t.test('each code is declared once, keyed and shaped as a BERTH_ code with an HTTP status and a meaning', async t => {
  const codes = await declared()
  t.ok(codes.length > 50, `${codes.length} codes declared in ${DECLARATION_FILES.length} modules`)
  const seen = new Map<string, string>()
  for (const { code, status, meaning, file } of codes) {
    t.match(code, CODE, `${code} (${file})`)
    t.ok(status >= 400 && status < 600, `${code}: status ${status}`)
    t.not(meaning.trim(), '', `${code} has a meaning`)
    t.notOk(seen.has(code), `${code} declared in ${file}${seen.has(code) ? ` and in ${seen.get(code) ?? ''}` : ''}`)
    seen.set(code, file)
  }
})

t.test('every declared code is in docs/api.md with its status, and every code there is declared', async t => {
  const codes = await declared()
  const rows = documented()
  for (const { code, status, file } of codes) {
    t.same(rows.get(code), [status], `${code} (${file}) is listed once in docs/api.md as ${status}`)
  }
  const names = new Set(codes.map(c => c.code))
  for (const code of rows.keys()) t.ok(names.has(code), `${code} of docs/api.md is declared`)
})

t.test('no BERTH_ literal in plugins/ or kernel/ but in a declaration or an environment variable\'s name', async t => {
  const variables = environmentVariables()
  const stray = literals().filter(l => !variables.has(l.text))
  t.same(stray.map(l => `${l.file}:${l.line} ${l.text}`), [], 'every code is used through its declaration')
})

t.test('a declaration whose key is not its code does not compile', async t => {
  // @ts-expect-error the key NO_SUCH_THING names another code
  const wrong = errorCodes({ NO_SUCH_THING: { code: 'BERTH_NO_SUCH_THINGS', status: 404, meaning: 'misspelt' } })
  t.equal(wrong.NO_SUCH_THING.code, 'BERTH_NO_SUCH_THINGS')
})

t.test('a declared code given to an error of another status does not compile', async t => {
  // @ts-expect-error BERTH_NOT_FOUND is declared with 404, Conflict answers 409
  const wrong = new Conflict('taken', { code: KERNEL_CODES.NOT_FOUND })
  t.equal(wrong.statusCode, 409)
})
