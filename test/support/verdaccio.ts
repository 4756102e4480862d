// A real npm registry on loopback: npm `verdaccio` (a devDependency) in a child process on
// 127.0.0.1:<free port>, storage in a temporary directory, no uplinks (it serves only what the test
// publishes and never reaches out), stopped at test end. It comes with a user (made through the
// registry's own adduser route) and an npm environment of its own — a user config holding that
// user's token and a fresh cache — so that `npm publish` and `npm install` in tests touch neither
// the machine's ~/.npmrc nor its cache.
import { execFile } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { startDaemon } from './daemon.js'
import { probablyFreePort } from './net.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

const run = promisify(execFile)

export interface NpmRegistry {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ */
  url: string
  /** Verdaccio's storage directory: `<storage>/<package>/` holds package.json and the tarballs. */
  storage: string
  /**
   * The environment for npm and for programs that run npm against this registry: the machine's
   * environment without npm_config_* and tap's loaders, with this registry's user config and cache.
   */
  env: NodeJS.ProcessEnv
  /** Run npm with `env` (in `cwd`); resolves to stdout, rejects with npm's stderr. */
  npm(args: string[], cwd?: string): Promise<string>
}

function cleanEnv (): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE_OPTIONS' || key.toLowerCase().startsWith('npm_config_')) continue
    env[key] = value
  }
  return env
}

export async function startVerdaccio (t: Teardown): Promise<NpmRegistry> {
  const bin = join(dirname(createRequire(import.meta.url).resolve('verdaccio/package.json')), 'bin', 'verdaccio')
  const dir = tempDir(t, 'berth-verdaccio-')
  const storage = join(dir, 'storage')
  mkdirSync(storage)
  const port = await probablyFreePort()
  const url = `http://127.0.0.1:${port}/`
  const config = join(dir, 'config.yaml')
  writeFileSync(config, [
    `storage: ${storage}`,
    'auth:',
    '  htpasswd:',
    `    file: ${join(dir, 'htpasswd')}`,
    'uplinks: {}',
    'packages:',
    '  \'**\':',
    '    access: $all',
    '    publish: $authenticated',
    '    unpublish: $authenticated',
    'web:',
    '  enable: false',
    'middlewares:',
    '  audit:',
    '    enabled: false',
    'log: { type: stdout, format: pretty, level: warn }',
    ''
  ].join('\n'))
  await startDaemon(t, 'verdaccio', {
    command: process.execPath,
    args: [bin, '--config', config, '--listen', `127.0.0.1:${port}`],
    env: cleanEnv(),
    logFile: join(dir, 'verdaccio.log'),
    ready: async () => (await fetch(new URL('-/ping', url))).ok
  })

  const user = await fetch(new URL('-/user/org.couchdb.user:berth-test', url), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'berth-test', password: 'berth-test-password', email: 'test@example.invalid' })
  })
  const { token } = await user.json() as { token?: string }
  if (!user.ok || typeof token !== 'string') throw new Error(`verdaccio refused to add a user: ${user.status}`)
  const userconfig = join(dir, 'npmrc')
  writeFileSync(userconfig, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\naudit=false\nfund=false\nupdate-notifier=false\n`, { mode: 0o600 })
  const env = { ...cleanEnv(), npm_config_userconfig: userconfig, npm_config_cache: join(dir, 'npm-cache') }
  const npm = async (args: string[], cwd?: string): Promise<string> => {
    try {
      return (await run('npm', args, { cwd, env, timeout: 60_000 })).stdout
    } catch (err) {
      throw new Error(`npm ${args.join(' ')} failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`)
    }
  }
  return { url, storage, env, npm }
}
