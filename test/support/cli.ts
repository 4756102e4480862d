// Run the built `berth` command in a child process, as an operator would.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../dist/kernel/cli.js', import.meta.url))

/**
 * The child runs compiled JavaScript: tap's loaders (NODE_OPTIONS) would only slow it down. The telemetry,
 * app and proxy listeners take free ports unless a test says otherwise, so parallel servers never collide.
 */
function childEnv (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _loaders, ...env } = process.env
  return { BERTH_TELEMETRY_PORT: '0', BERTH_APP_PORT: '0', PROXY_HTTP_PORT: '0', PROXY_HTTPS_PORT: '0', ...env, ...extra }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Run `berth ...args` to completion (bounded by `timeout` ms). */
export async function runCli (args: string[], options: { cwd?: string, env?: NodeJS.ProcessEnv, timeout?: number } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeout ?? 60_000
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  return { code, stdout, stderr }
}

/** Start `berth ...args` and leave it running; the caller stops it. */
export function spawnCli (args: string[], options: { cwd?: string, env?: NodeJS.ProcessEnv } = {}): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  return Object.assign(child, { output: () => output })
}

/** Wait for a child to exit, returning its code (or the signal name). */
export async function exited (child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return child.exitCode
  if (child.signalCode !== null) return child.signalCode
  return await new Promise(resolve => child.on('exit', (code, signal) => { resolve(code ?? signal ?? 'unknown') }))
}
