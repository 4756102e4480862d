// `berth update`: replace the installed Berth with the latest release published on the npm registry
// (`--registry`, or npm's own `registry` setting), as npm would, but only after the downloaded tarball
// has been checked against the digest the registry's metadata gives for it (`dist.integrity`, SRI
// sha512/sha384/sha256; the older `dist.shasum`, sha1, only when a release has no integrity at all).
// The install is the npm global one the running berth lives in (`<prefix>/lib/node_modules/berth`),
// or the one under `--prefix`; npm installs the verified local tarball there. Nothing under the
// prefix changes before the tarball has passed: a failed download or check leaves the old install as
// it was (and npm rolls back its own failures). `--check` only compares the versions. A release that
// lacks the running package's commands (`bin`) is refused as someone else's package of the same name.
// Exit codes: 0 updated or already up to date, 10 `--check` found a newer release, 1 failure, 2 usage.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, sep } from 'node:path'
import { promisify } from 'node:util'
import { messageOf } from '../errors.js'
import { PACKAGE_ROOT } from '../paths.js'
import { UsageError } from './cli-registry.js'
import { UPDATE_AVAILABLE, type UpdateOptions } from './update-command.js'

const run = promisify(execFile)

const METADATA_TIMEOUT = 30_000
const TARBALL_TIMEOUT = 300_000
const NPM_TIMEOUT = 600_000


interface PackageJson { name: string, version: string, bin?: string | Record<string, string> }
interface Dist { tarball?: string, integrity?: string, shasum?: string }
interface Manifest { version?: string, dist?: Dist, engines?: { node?: string }, bin?: string | Record<string, string>, dependencies?: Record<string, string> }
interface Packument { 'dist-tags'?: Record<string, string>, versions?: Record<string, Manifest> }

function readPackageJson (dir: string): PackageJson {
  const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Partial<PackageJson>
  if (typeof json.name !== 'string' || typeof json.version !== 'string') throw new Error(`${dir}/package.json has no name or version`)
  return { name: json.name, version: json.version, bin: json.bin }
}

/** The commands a package provides (a string `bin` is one command named after the package). */
function commandsOf (name: string, bin: PackageJson['bin']): string[] {
  if (typeof bin === 'string') return [name.split('/').at(-1) as string]
  return typeof bin === 'object' && bin !== null ? Object.keys(bin) : []
}

/** Where npm puts a global package under a prefix (POSIX layout). */
function packageDir (prefix: string, name: string): string {
  return join(prefix, 'lib', 'node_modules', ...name.split('/'))
}

/** The npm prefix the running berth is installed under, if it runs from `<prefix>/lib/node_modules/<name>`. */
function runningPrefix (name: string): string | undefined {
  const tail = sep + join('lib', 'node_modules', ...name.split('/'))
  return PACKAGE_ROOT.endsWith(tail) ? PACKAGE_ROOT.slice(0, -tail.length) || sep : undefined
}

/** The install to compare and replace: its prefix and version (prefix undefined: not an npm global install). */
function installed (name: string, given: string | undefined): { prefix?: string, version: string, where: string } {
  if (given === undefined) {
    const prefix = runningPrefix(name)
    return { prefix, version: readPackageJson(PACKAGE_ROOT).version, where: PACKAGE_ROOT }
  }
  const prefix = resolve(given)
  const dir = packageDir(prefix, name)
  let isLink: boolean
  try {
    isLink = lstatSync(dir).isSymbolicLink()
  } catch {
    throw new Error(`${name} is not installed under --prefix ${prefix} (no ${dir})`)
  }
  if (isLink) throw new Error(`${dir} is a link (npm link) to a working copy: update that with git, not berth update`)
  const found = readPackageJson(dir)
  if (found.name !== name) throw new Error(`${dir}/package.json names ${found.name}, not ${name}`)
  return { prefix, version: found.version, where: dir }
}

async function npm (args: string[], timeout: number): Promise<string> {
  try {
    return (await run('npm', args, { timeout, maxBuffer: 16 * 1024 * 1024 })).stdout
  } catch (err) {
    const { stderr, code } = err as { stderr?: string, code?: unknown }
    if (code === 'ENOENT') throw new Error('npm is not on PATH')
    const lines = (stderr ?? '').split('\n').map(line => line.trim()).filter(line => line !== '' && !line.includes('Unknown user config'))
    const reason = lines.find(line => /^npm (error|ERR!) (?!code )/.test(line)) ?? lines.at(-1) ?? messageOf(err)
    throw new Error(`npm ${args[0]} failed: ${reason.replace(/^npm (error|ERR!) /, '')}`)
  }
}

/** The registry's base URL, with one trailing slash. */
async function registryUrl (given: string | undefined): Promise<URL> {
  const text = given ?? (await npm(['config', 'get', 'registry'], METADATA_TIMEOUT)).trim()
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`${given === undefined ? 'npm config registry' : '--registry'} ${text} is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`registry ${text} is not an http(s) URL`)
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return url
}

function reasonOf (err: unknown): string {
  const cause = (err as { cause?: unknown }).cause
  if (err instanceof Error && err.name === 'TimeoutError') return 'timed out'
  return cause instanceof Error ? messageOf(cause) : messageOf(err)
}

async function get (url: URL, accept: string, timeout: number, what: string): Promise<Response> {
  try {
    return await fetch(url, { headers: { accept }, signal: AbortSignal.timeout(timeout) })
  } catch (err) {
    throw new Error(`cannot reach the registry for ${what} (${url.href}): ${reasonOf(err)}`)
  }
}

/** The latest release's version and manifest, from the registry's metadata (packument) of `name`. */
async function latestRelease (registry: URL, running: PackageJson): Promise<{ version: string, manifest: Manifest }> {
  const { name } = running
  const url = new URL(name.replace('/', '%2f'), registry)
  const response = await get(url, 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8', METADATA_TIMEOUT, name)
  if (response.status === 404) throw new Error(`${name} is not published on ${registry.href}`)
  if (!response.ok) throw new Error(`the registry answered ${response.status} ${response.statusText} for ${url.href}`)
  let packument: Packument
  try {
    packument = await response.json() as Packument
  } catch (err) {
    throw new Error(`the registry sent no valid metadata for ${name} (${url.href}): ${reasonOf(err)}`)
  }
  const version = typeof packument === 'object' && packument !== null ? packument['dist-tags']?.latest : undefined
  if (typeof version !== 'string') throw new Error(`the registry's metadata for ${name} has no "latest" release (${url.href})`)
  const manifest = packument.versions?.[version]
  if (manifest?.dist === undefined || typeof manifest.dist.tarball !== 'string') throw new Error(`the registry's metadata for ${name}@${version} has no tarball`)
  // A package of the same name that is not this program (a name holder, someone else's package) lacks its commands.
  const missing = commandsOf(name, running.bin).filter(command => !commandsOf(name, manifest.bin).includes(command))
  if (missing.length > 0) throw new Error(`${name}@${version} on ${registry.href} provides no \`${missing.join('`, `')}\` command: it is not a release of this program`)
  return { version, manifest }
}

/** The strongest digest the metadata offers for the tarball, and the algorithm's name. */
function expectedDigest (dist: Dist): { algorithm: string, digests: string[], encoding: 'base64' | 'hex' } {
  if (typeof dist.integrity === 'string' && dist.integrity.trim() !== '') {
    const entries = dist.integrity.trim().split(/\s+/).map(entry => /^(sha512|sha384|sha256)-([A-Za-z0-9+/]+={0,2})(\?.*)?$/.exec(entry)).filter(match => match !== null)
    for (const algorithm of ['sha512', 'sha384', 'sha256']) {
      const digests = entries.filter(match => match[1] === algorithm).map(match => match[2])
      if (digests.length > 0) return { algorithm, digests, encoding: 'base64' }
    }
    throw new Error(`the registry's integrity "${dist.integrity}" holds no sha512, sha384 or sha256 digest`)
  }
  if (typeof dist.shasum === 'string' && /^[0-9a-f]{40}$/i.test(dist.shasum)) return { algorithm: 'sha1', digests: [dist.shasum.toLowerCase()], encoding: 'hex' }
  throw new Error('the registry gives neither an integrity nor a shasum for the tarball: refusing to install it unchecked')
}

/** Refuses the tarball unless its digest is the one the registry's metadata names. */
export function verifyTarball (bytes: Buffer, dist: Dist): string {
  const { algorithm, digests, encoding } = expectedDigest(dist)
  const actual = createHash(algorithm).update(bytes).digest(encoding)
  if (!digests.includes(actual)) throw new Error(`the downloaded tarball fails its ${algorithm} check (the registry's metadata says ${digests[0]}, the file has ${actual}): nothing was changed`)
  return algorithm
}

async function download (url: URL, what: string): Promise<Buffer> {
  const response = await get(url, 'application/octet-stream', TARBALL_TIMEOUT, what)
  if (!response.ok) throw new Error(`downloading ${url.href} failed: ${response.status} ${response.statusText}`)
  try {
    return Buffer.from(await response.arrayBuffer())
  } catch (err) {
    throw new Error(`downloading ${url.href} failed: ${reasonOf(err)}`)
  }
}

/** Runs `berth update` and returns its exit code; failures are thrown (one line each). */
export async function runUpdate (options: UpdateOptions, say: (line: string) => void = console.log): Promise<number> {
  const { default: semver } = await import('semver')
  const running = readPackageJson(PACKAGE_ROOT)
  const { name } = running
  const install = installed(name, options.prefix)
  if (semver.valid(install.version) === null) throw new Error(`the installed version "${install.version}" (${install.where}) is not a semantic version`)
  const registry = await registryUrl(options.registry)
  const latest = await latestRelease(registry, running)
  if (semver.valid(latest.version) === null) throw new Error(`the registry's latest release of ${name}, "${latest.version}", is not a semantic version`)
  const newer = semver.gt(latest.version, install.version)
  const state = newer ? 'update available' : semver.eq(latest.version, install.version) ? 'up to date' : 'installed is newer than latest'
  say(`${name}: installed ${install.version}, latest ${latest.version} on ${registry.href}: ${state}`)
  if (options.check === true) return newer ? UPDATE_AVAILABLE : 0
  if (!newer) return 0
  if (install.prefix === undefined) {
    throw new Error(`this berth runs from ${PACKAGE_ROOT}, not from an npm global install (<prefix>/lib/node_modules/${name}): update that copy with git or npm, or pass --prefix`)
  }
  // A release that depends on the `node` package runs on the Node.js that package installs (its
  // `berth` command starts that one), whatever Node.js runs this update: its engines are checked
  // against the lowest version of that dependency.
  const node = latest.manifest.engines?.node
  const own = latest.manifest.dependencies?.node
  const runtime = typeof own === 'string' && semver.validRange(own) !== null ? semver.minVersion(own)?.version : undefined
  if (typeof node === 'string' && !semver.satisfies(runtime ?? process.versions.node, node)) {
    throw new Error(`${name} ${latest.version} needs Node.js ${node}, ${runtime === undefined ? 'this is' : 'it installs'} ${runtime ?? process.versions.node}: nothing was changed`)
  }
  const tarball = new URL(latest.manifest.dist?.tarball as string, registry)
  const bytes = await download(tarball, `${name}@${latest.version}`)
  const algorithm = verifyTarball(bytes, latest.manifest.dist as Dist)
  const dir = mkdtempSync(join(tmpdir(), 'berth-update-'))
  try {
    const file = join(dir, `${name.replace('/', '-').replace(/^@/, '')}-${latest.version}.tgz`)
    writeFileSync(file, bytes)
    say(`verified ${tarball.href} (${algorithm}); installing into ${install.prefix}`)
    await npm(['install', '--global', '--prefix', install.prefix, '--registry', registry.href, '--no-audit', '--no-fund', file], NPM_TIMEOUT)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const now = readPackageJson(packageDir(install.prefix, name)).version
  if (now !== latest.version) throw new Error(`npm finished, but ${packageDir(install.prefix, name)} holds ${now}, not ${latest.version}`)
  say(`updated ${name} ${install.version} → ${latest.version}; restart a running server to use it (systemctl restart berth)`)
  const ownNode = join(packageDir(install.prefix, name), 'node_modules', 'node', 'bin', 'node')
  if (existsSync(ownNode) && process.execPath !== ownNode) {
    say(`${name} ${latest.version} runs on its own Node.js, ${ownNode}; a unit written while berth ran on ${process.execPath} keeps that one until berth install-service writes it again`)
  }
  return 0
}
