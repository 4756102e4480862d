// The sign-in mode and who is signed in, the live event stream (server-sent events with ids and Last-Event-ID resume), the
// Prometheus metrics, and a consistent backup of the telemetry data and its ELF files (and nothing else)
// streamed while writes continue.
import { createReadStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Conflict } from '../../../kernel/index.js'
import { realmEndpoints } from '../auth/jwt.js'
import { ssoEnabled } from '../config.js'
import { elfBackupEntries } from '../elf-files.js'
import type { LoggedEvent } from '../event-log.js'
import type { Telemetry } from '../telemetry.js'

const KEEPALIVE_MS = 15_000

function sse (entry: LoggedEvent): string {
  return `id: ${entry.id}\nevent: ${entry.event.kind}\ndata: ${JSON.stringify(entry.event)}\n\n`
}

export function serviceRoutes (app: FastifyInstance, t: Telemetry): void {
  app.get('/auth/mode', { config: { telemetryAccess: 'public' } }, async () => {
    if (!ssoEnabled(t.settings)) return { mode: 'basic' }
    const endpoints = realmEndpoints(t.settings.sso)
    return { mode: 'sso', client_id: t.settings.sso.client_id, realm: t.settings.sso.realm, ...endpoints }
  })

  app.get('/auth/me', { config: { telemetryAccess: 'viewer' } }, async request => ({ name: request.principal?.name, role: request.principal?.role }))

  app.get<{ Querystring: { last_event_id?: string } }>('/events/stream', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const header = request.headers['last-event-id'] ?? request.query.last_event_id
    const lastId = Number(header ?? '')
    reply.hijack()
    const out = reply.raw
    out.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' })
    // A HEAD answer has no body: node would hold its head back until the end, so end it at once.
    if (request.method === 'HEAD') {
      out.end()
      return
    }
    out.write('retry: 2000\n\n')
    if (header !== undefined && Number.isInteger(lastId) && lastId >= 0) {
      const missed = t.events.since(lastId)
      if (missed.gap) out.write('event: reset\ndata: {"reason":"events after the given id are no longer kept"}\n\n')
      for (const entry of missed.events) out.write(sse(entry))
    }
    const unsubscribe = t.events.subscribe(entry => { out.write(sse(entry)) })
    const keepalive = setInterval(() => { out.write(': keep-alive\n\n') }, KEEPALIVE_MS)
    const end = (): void => { out.end() }
    t.stopping.addEventListener('abort', end, { once: true })
    request.raw.once('close', () => {
      clearInterval(keepalive)
      unsubscribe()
      t.stopping.removeEventListener('abort', end)
    })
  })

  app.get('/metrics/prometheus', { config: { telemetryAccess: t.settings.metrics_public ? 'public' : 'viewer' } }, async (_request, reply) => {
    const { contentType, body } = await t.metrics.expose()
    return await reply.type(contentType).send(body)
  })

  app.get('/admin/backup', { config: { telemetryAccess: 'admin' } }, async (_request, reply) => {
    if (t.storage.backend !== 'lmdb') throw new Conflict('the telemetry is kept in PostgreSQL ([ingest].database_url): back that database up with its own tools (pg_dump); /admin/backup copies the embedded store only')
    const dir = await mkdtemp(join(t.stateDir, 'backup-'))
    const file = join(dir, 'berth.mdb')
    await t.store.backup(file, elfBackupEntries(t.store, t.elfDir))
    const stream = createReadStream(file)
    stream.once('close', () => { void rm(dir, { recursive: true, force: true }) })
    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    return await reply
      .type('application/octet-stream')
      .header('content-disposition', `attachment; filename="berth-ingest-${stamp}.mdb"`)
      .send(stream)
  })
}
