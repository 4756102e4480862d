// `berth update` against a real npm registry on loopback (verdaccio, no uplinks): the built `berth`
// command reads the registry's metadata, compares versions, downloads the latest tarball, checks it
// against the metadata's integrity and has npm install it into the prefix of the install it replaces.
//
// The packages published here are stand-ins named `berth` (1.0.0, 1.1.0): a package.json and a
// one-line bin that prints its version. The real package cannot be served by an offline registry
// (its dependencies would have to be published to it too); what is tested is the command that
// replaces an install, which treats every release alike.
import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runCli, type CliResult } from '../support/cli.js'
import { requireComponent } from '../support/component.js'
import { tempDir } from '../support/tmp.js'
import { startVerdaccio, type NpmRegistry } from '../support/verdaccio.js'

const run = promisify(execFile)

const registry = await requireComponent(t, 'verdaccio', async () => await startVerdaccio(t))

/** A stand-in release of `berth` in a fresh directory: its bin prints `berth stand-in <version>` (and `says`). */
function standIn (version: string, says = '', dependencies: Record<string, string> = {}): string {
  const dir = tempDir(t, 'berth-standin-')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'berth', version, description: 'stand-in release for the update test', bin: { berth: 'cli.js' }, dependencies, license: 'MIT' }))
  writeFileSync(join(dir, 'cli.js'), `#!/usr/bin/env node\nconsole.log('berth stand-in ${version}${says}')\n`, { mode: 0o755 })
  return dir
}

if (registry !== undefined) {
  const reg: NpmRegistry = registry
  // The npm_config_* variables of the test's own environment (npx sets some) must not reach the child.
  const unset = Object.fromEntries(Object.keys(process.env).filter(key => key.toLowerCase().startsWith('npm_config_')).map(key => [key, undefined]))
  const berth = async (args: string[]): Promise<CliResult> => await runCli(['update', ...args], { env: { ...unset, ...reg.env }, timeout: 120_000 })
  const prefix = tempDir(t, 'berth-prefix-')
  const installedVersion = (): string => (JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', 'berth', 'package.json'), 'utf8')) as { version: string }).version
  const installedBin = async (): Promise<string> => (await run(join(prefix, 'bin', 'berth'), [], { env: reg.env })).stdout
  const tarball = join(reg.storage, 'berth', 'berth-1.1.0.tgz')

  t.test('a registry that does not have berth: one line, exit 1', async t => {
    const result = await berth(['--check', '--registry', reg.url])
    t.same([result.code, result.stderr], [1, `berth: berth is not published on ${reg.url}\n`])
  })

  t.test('1.0.0 installed, 1.1.0 published', async t => {
    await reg.npm(['publish', standIn('1.0.0'), '--registry', reg.url])
    await reg.npm(['install', '--global', '--prefix', prefix, '--registry', reg.url, 'berth@1.0.0'])
    await reg.npm(['publish', standIn('1.1.0'), '--registry', reg.url])
    t.equal(installedVersion(), '1.0.0')
    t.equal(await installedBin(), 'berth stand-in 1.0.0\n')
  })

  t.test('--check reports the newer release (exit 10) and changes nothing; the registry comes from npm config', async t => {
    const result = await berth(['--check', '--prefix', prefix])
    t.same([result.code, result.stdout, result.stderr], [10, `berth: installed 1.0.0, latest 1.1.0 on ${reg.url}: update available\n`, ''])
    t.equal(installedVersion(), '1.0.0')
  })

  t.test('a tampered tarball is refused before anything is installed', async t => {
    const original = join(tempDir(t), 'original.tgz')
    copyFileSync(tarball, original)
    t.teardown(() => { copyFileSync(original, tarball) })
    // The registry now serves other bytes under 1.1.0 than those its metadata's integrity describes.
    const packed = tempDir(t)
    await reg.npm(['pack', standIn('1.1.0', ' (tampered)'), '--pack-destination', packed])
    copyFileSync(join(packed, 'berth-1.1.0.tgz'), tarball)

    const result = await berth(['--registry', reg.url, '--prefix', prefix])
    t.equal(result.code, 1)
    t.match(result.stderr, /^berth: the downloaded tarball fails its sha512 check \(the registry's metadata says \S+, the file has \S+\): nothing was changed\n$/)
    t.equal(installedVersion(), '1.0.0', 'the old install stays')
    t.equal(await installedBin(), 'berth stand-in 1.0.0\n')

    // Without an integrity in the metadata, the sha1 shasum is what is checked.
    const metadataFile = join(reg.storage, 'berth', 'package.json')
    const metadata = readFileSync(metadataFile, 'utf8')
    t.teardown(() => { writeFileSync(metadataFile, metadata) })
    const edited = JSON.parse(metadata) as { versions: Record<string, { dist: { integrity?: string } }> }
    delete edited.versions['1.1.0'].dist.integrity
    writeFileSync(metadataFile, JSON.stringify(edited))
    const sha1 = await berth(['--registry', reg.url, '--prefix', prefix])
    t.equal(sha1.code, 1)
    t.match(sha1.stderr, /^berth: the downloaded tarball fails its sha1 check \(the registry's metadata says [0-9a-f]{40}, the file has [0-9a-f]{40}\): nothing was changed\n$/)
    t.equal(installedVersion(), '1.0.0')
  })

  t.test('update replaces 1.0.0 with the verified 1.1.0', async t => {
    const result = await berth(['--registry', reg.url, '--prefix', prefix])
    t.equal(result.code, 0, result.stderr)
    t.same(result.stdout.split('\n'), [
      `berth: installed 1.0.0, latest 1.1.0 on ${reg.url}: update available`,
      `verified ${reg.url}berth/-/berth-1.1.0.tgz (sha512); installing into ${prefix}`,
      'updated berth 1.0.0 → 1.1.0; restart a running server to use it (systemctl restart berth)',
      ''
    ])
    t.equal(installedVersion(), '1.1.0')
    t.equal(await installedBin(), 'berth stand-in 1.1.0\n')
    t.same(readdirSync(join(prefix, 'lib', 'node_modules')), ['berth'], 'one berth, nothing left beside it')
  })

  t.test('already at the latest release: up to date, exit 0', async t => {
    const check = await berth(['--check', '--registry', reg.url, '--prefix', prefix])
    t.same([check.code, check.stdout], [0, `berth: installed 1.1.0, latest 1.1.0 on ${reg.url}: up to date\n`])
    const update = await berth(['--registry', reg.url, '--prefix', prefix])
    t.same([update.code, update.stdout, update.stderr], [0, `berth: installed 1.1.0, latest 1.1.0 on ${reg.url}: up to date\n`, ''])
    t.equal(installedVersion(), '1.1.0')
  })

  t.test('installs it cannot replace are refused', async t => {
    // This berth runs from the working copy (dist/), not from an npm global install.
    const here = await berth(['--registry', reg.url])
    t.equal(here.code, 1)
    t.match(here.stderr, /^berth: this berth runs from \S+, not from an npm global install \(<prefix>\/lib\/node_modules\/berth\): update that copy with git or npm, or pass --prefix\n$/)
    const linked = tempDir(t)
    mkdirSync(join(linked, 'lib', 'node_modules'), { recursive: true })
    symlinkSync(standIn('1.0.0'), join(linked, 'lib', 'node_modules', 'berth'))
    const link = await berth(['--registry', reg.url, '--prefix', linked])
    t.same([link.code, link.stderr], [1, `berth: ${join(linked, 'lib', 'node_modules', 'berth')} is a link (npm link) to a working copy: update that with git, not berth update\n`])
    const none = tempDir(t)
    const missing = await berth(['--check', '--registry', reg.url, '--prefix', none])
    t.same([missing.code, missing.stderr], [1, `berth: berth is not installed under --prefix ${none} (no ${join(none, 'lib', 'node_modules', 'berth')})\n`])
  })

  t.test('bad registries: one line on stderr and a non-zero exit', async t => {
    // Port 0: nothing can listen there, so every connection is refused.
    const unreachable = await berth(['--check', '--registry', 'http://127.0.0.1:0/', '--prefix', prefix])
    t.equal(unreachable.code, 1)
    t.match(unreachable.stderr, /^berth: cannot reach the registry for berth \(http:\/\/127\.0\.0\.1:0\/berth\): connect ECONNREFUSED 127\.0\.0\.1(:0)?\n$/)

    const usage = await berth(['--check', '--registry', 'not a url', '--prefix', prefix])
    t.same([usage.code, usage.stderr], [2, 'berth: --registry not a url is not a URL\n'])

    // A stand-in for a broken registry: a loopback HTTP server answering with what a registry must not.
    const answers: Record<string, [number, string]> = {
      '/garbage/berth': [200, '<html>not json'],
      '/untagged/berth': [200, JSON.stringify({ name: 'berth', 'dist-tags': {}, versions: {} })],
      '/failing/berth': [500, 'oops'],
      // What the public registry holds under this name today: a name holder with no `berth` command.
      '/holder/berth': [200, JSON.stringify({ name: 'berth', 'dist-tags': { latest: '9.0.0' }, versions: { '9.0.0': { name: 'berth', version: '9.0.0', dist: { tarball: 'http://127.0.0.1:1/berth-9.0.0.tgz', shasum: '0'.repeat(40) } } } })]
    }
    const server = createServer((request, response) => {
      const [status, body] = answers[request.url ?? ''] ?? [404, '{}']
      response.writeHead(status, { 'content-type': 'application/json' }).end(body)
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { server.close() })
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
    const garbage = await berth(['--check', '--registry', `${base}/garbage`, '--prefix', prefix])
    t.equal(garbage.code, 1)
    t.match(garbage.stderr, new RegExp(`^berth: the registry sent no valid metadata for berth \\(${base}/garbage/berth\\): .+\\n$`))
    const untagged = await berth(['--check', '--registry', `${base}/untagged`, '--prefix', prefix])
    t.same([untagged.code, untagged.stderr], [1, `berth: the registry's metadata for berth has no "latest" release (${base}/untagged/berth)\n`])
    const failing = await berth(['--check', '--registry', `${base}/failing`, '--prefix', prefix])
    t.same([failing.code, failing.stderr], [1, `berth: the registry answered 500 Internal Server Error for ${base}/failing/berth\n`])
    const holder = await berth(['--registry', `${base}/holder`, '--prefix', prefix])
    t.same([holder.code, holder.stderr], [1, `berth: berth@9.0.0 on ${base}/holder/ provides no \`berth\` command: it is not a release of this program\n`])
    t.equal(installedVersion(), '1.1.0')
  })

  t.test('a verified release that npm cannot install (a dependency the registry lacks) leaves the old install', async t => {
    await reg.npm(['publish', standIn('1.2.0', '', { 'berth-test-missing-dependency': '^1.0.0' }), '--registry', reg.url])
    const result = await berth(['--registry', reg.url, '--prefix', prefix])
    t.equal(result.code, 1)
    t.match(result.stderr, /^berth: npm install failed: .*berth-test-missing-dependency.*\n$/)
    t.equal(installedVersion(), '1.1.0')
    t.equal(await installedBin(), 'berth stand-in 1.1.0\n')
  })
}
