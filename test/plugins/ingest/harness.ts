// A telemetry server for tests: the ingest plugin in a real kernel on loopback, a known device key,
// one Basic-auth user per role, and helpers to post chunks and call the API as each role. With
// BERTH_TEST_INGEST_BACKEND=postgres its telemetry is kept in a fresh PostgreSQL database (see
// test/plugins/ingest/postgres/, which runs the main files so).
import type { Test } from 'tap'
import type { Logger } from 'pino'
import devIdp from '../../../plugins/dev-idp/index.js'
import ingest, { type IngestService } from '../../../plugins/ingest/index.js'
import { hashPassword } from '../../../plugins/ingest/auth/passwords.js'
import type { Kernel } from '../../../kernel/index.js'
import { testKernel } from '../../support/kernel.js'

export const API_KEY = 'test-device-key-0123456789'
export const ROLES = ['admin', 'provisioner', 'viewer'] as const
export type TestRole = typeof ROLES[number]
const PASSWORD = 'correct horse battery staple'

/** The password of the test user of `role`. */
export function passwordOf (role: TestRole): string {
  return `${PASSWORD} ${role}`
}
/** One Basic-auth user per role, for a kernel of ingest and plugins built on it. */
export const USERS = ROLES.map(role => ({ name: role, role, password: hashPassword(passwordOf(role)) }))

export interface TelemetryServer {
  kernel: Kernel
  base: URL
  service: IngestService
  /** POST a body of frames with the device key (or `key`), returning status and JSON. */
  ingest(body: Uint8Array, key?: string | null): Promise<{ status: number, json: IngestResponse }>
  /** Call the API as `role` (or anonymously with null). */
  api(method: string, path: string, role: TestRole | null, body?: unknown, headers?: Record<string, string>): Promise<Response>
}

export interface IngestResponse {
  accepted: number
  duplicate: number
  partial: number
  rejected: number
  error?: string
  frames: Array<{ status: string, reason?: string, device?: string, sequence?: number, type?: string, fragment?: string }>
}

/** The frames of an encoded body, one by one (a fragmented chunk's fragments, to send apart). */
export function framesOf (body: Uint8Array): Buffer[] {
  const all = Buffer.from(body)
  const frames: Buffer[] = []
  for (let at = 0; at < all.length;) {
    const length = 26 + all.readUInt16LE(at + 20)
    frames.push(all.subarray(at, at + length))
    at += length
  }
  return frames
}

export function basic (role: TestRole): string {
  return `Basic ${Buffer.from(`${role}:${passwordOf(role)}`).toString('base64')}`
}

/** Whether this run keeps the telemetry in PostgreSQL (BERTH_TEST_INGEST_BACKEND=postgres). */
export function onPostgres (): boolean {
  return process.env.BERTH_TEST_INGEST_BACKEND === 'postgres'
}

/** Run a test file's scenarios (`load` imports it) with the telemetry in PostgreSQL; skipped, or failed under CI, without PostgreSQL. */
export async function onPostgresToo (t: Test, load: () => Promise<unknown>): Promise<void> {
  // Loaded here, when a run asks for PostgreSQL: the in-process tests need none of it (scripts/test-tier.js).
  const [{ requireComponent }, { runPostgres }] = await Promise.all([import('../../support/component.js'), import('../../support/postgres.js')])
  if (await requireComponent(t, 'postgresql-15', runPostgres) === undefined) return
  process.env.BERTH_TEST_INGEST_BACKEND = 'postgres'
  await load()
}

/** The [ingest] settings of the backend this run tests: a fresh database's URL on PostgreSQL, nothing on LMDB. */
export async function backendSettings (t: Test): Promise<Record<string, unknown>> {
  if (!onPostgres()) return {}
  const { postgresDatabase } = await import('../../support/postgres.js')
  return { database_url: await postgresDatabase(t) }
}

/** `config` goes into [ingest], `server` into [server] (a state directory of the test's own). */
export async function telemetryServer (t: Test, config: Record<string, unknown> = {}, logger?: Logger, server: Record<string, unknown> = {}): Promise<TelemetryServer> {
  const backend = await backendSettings(t)
  const kernel = await testKernel(t, { plugins: [devIdp, ingest], config: { server, ingest: { api_key: API_KEY, users: USERS, ...backend, ...config } }, logger })
  const service: IngestService = kernel.service('ingest')
  if (onPostgres() && service.telemetry.storage.backend !== 'postgres') throw new Error('BERTH_TEST_INGEST_BACKEND=postgres, but the telemetry is not in PostgreSQL')
  const base = kernel.url('telemetry')
  const api: TelemetryServer['api'] = async (method, path, role, body, headers = {}) => await fetch(new URL(path, base), {
    method,
    headers: {
      ...(role !== null ? { authorization: basic(role) } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers
    },
    body: body !== undefined ? JSON.stringify(body) : undefined
  })
  return {
    kernel,
    base,
    service,
    api,
    async ingest (body, key = API_KEY) {
      const response = await fetch(new URL('/ingest/chunks', base), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', ...(key !== null ? { 'x-api-key': key } : {}) },
        body
      })
      return { status: response.status, json: await response.json() as IngestResponse }
    }
  }
}

/** Read server-sent events from a stream until `count` arrived. */
export async function readEvents (response: Response, count: number): Promise<Array<{ id: number, event: string, data: { kind: string, sequence?: number } }>> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const events: Array<{ id: number, event: string, data: { kind: string, sequence?: number } }> = []
  let text = ''
  while (events.length < count) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    let end: number
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end)
      text = text.slice(end + 2)
      const field = (name: string): string | undefined => block.split('\n').find(l => l.startsWith(`${name}: `))?.slice(name.length + 2)
      const data = field('data')
      if (data !== undefined) events.push({ id: Number(field('id')), event: field('event') ?? '', data: JSON.parse(data) })
    }
  }
  await reader.cancel()
  return events
}
