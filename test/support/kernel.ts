// Start a real kernel for a test: a fresh state directory, listeners on 127.0.0.1 with free ports,
// a silent (or captured) logger, and a teardown that stops it.
import pino, { type Logger } from 'pino'
import { Writable } from 'node:stream'
import { createKernel, type AnyPlugin, type Kernel } from '../../kernel/index.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** Tests stop hundreds of kernels: their clients' idle connections are closed after 50 ms at stop, not 1 s. */
export const TEST_IDLE_GRACE_MS = 50

export interface TestKernelOptions {
  plugins?: readonly AnyPlugin[]
  /** Sections besides [server]; [server] keys given here are merged over the test defaults. */
  config?: Record<string, Record<string, unknown>>
  env?: NodeJS.ProcessEnv
  logger?: Logger
  /** Create but do not start. */
  noStart?: boolean
}

/** The kernel's listener and those the plugins declare, on loopback with free ports. */
export function loopbackListeners (plugins: readonly AnyPlugin[] = []): Record<string, { host: string, port?: number }> {
  const declared = plugins.flatMap(plugin => plugin.listeners ?? [])
  return Object.fromEntries([{ name: 'control' }, ...declared].map(listener =>
    [listener.name, { host: '127.0.0.1', ...('portKey' in listener && listener.portKey !== undefined ? {} : { port: 0 }) }]))
}

/**
 * Tests run the proxy on one event loop unless they set `[proxy].workers` (the product's default is
 * the number of cores): its metrics and replica counts are then those of the main thread at once.
 */
export function withProxyWorkers (plugins: readonly AnyPlugin[], sections: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  return plugins.some(plugin => plugin.name === 'proxy') ? { ...sections, proxy: { workers: 1, ...sections.proxy } } : sections
}

export async function testKernel (t: Teardown, options: TestKernelOptions = {}): Promise<Kernel> {
  const stateDir = tempDir(t)
  const { server = {}, ...sections } = options.config ?? {}
  const kernel = await createKernel({
    cwd: stateDir,
    config: { server: { state_dir: stateDir, listeners: loopbackListeners(options.plugins), stop_idle_grace_ms: TEST_IDLE_GRACE_MS, ...server }, ...withProxyWorkers(options.plugins ?? [], sections) },
    env: options.env ?? {},
    plugins: options.plugins ?? [],
    logger: options.logger ?? pino({ level: 'silent' })
  })
  t.teardown(async () => { await kernel.stop() })
  if (options.noStart !== true) await kernel.start()
  return kernel
}

/** A logger whose lines are kept in memory, to assert on what was (and was not) logged. */
export function capturedLogger (level = 'info'): { logger: Logger, lines: () => string } {
  const chunks: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done() } })
  return { logger: pino({ level }, sink), lines: () => chunks.join('') }
}
