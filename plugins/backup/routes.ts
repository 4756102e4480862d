// Control API routes under /api/v1/backups: run one now (its progress streamed as lines of JSON),
// list the snapshots of every target, restore a service's or a volume's data.
import { PassThrough } from 'node:stream'
import type { FastifyPluginAsync } from 'fastify'
import { BadRequest } from '../../kernel/index.js'
import type { TokenService } from '../tokens/index.js'
import type { Backups } from './runtime.js'
import { SNAPSHOT } from './targets.js'

export function backupRoutes (backups: Backups, tokens: TokenService): FastifyPluginAsync {
  const viewer = { onRequest: tokens.requireRole('viewer') }
  const admin = { onRequest: tokens.requireRole('admin') }
  return async app => {
    // A token limited to projects sees the archives of their volumes (`<project>_<volume>`) only.
    app.get('/', viewer, async request => {
      const targets = await backups.list()
      const projects = tokens.projects(request)
      if (projects === undefined) return { targets }
      const seen = (volume: string): boolean => projects.some(p => volume.startsWith(`${p}_`))
      return { targets: targets.map(t => t.snapshots === undefined ? t : { ...t, snapshots: t.snapshots.map(s => ({ ...s, volumes: s.volumes.filter(v => seen(v.volume)) })) }) }
    })

    // Lines of JSON: {"step", "detail"} while it runs, then {"result": ...} or {"error": ...}.
    app.post('/', admin, async (_request, reply) => {
      const lines = new PassThrough()
      const write = (value: object): void => { lines.write(`${JSON.stringify(value)}\n`) }
      backups.run(write).then(result => { write({ result }) }, (err: Error) => { write({ error: err.message }) }).finally(() => { lines.end() })
      return await reply.type('application/x-ndjson').send(lines)
    })

    app.post<{ Body: { name?: unknown, snapshot?: unknown, target?: unknown } | undefined }>('/restore', admin, async request => {
      const { name, snapshot, target } = request.body ?? {}
      if (typeof name !== 'string' || name === '') throw new BadRequest('name (a service or a volume) is required')
      if (snapshot !== undefined && (typeof snapshot !== 'string' || !SNAPSHOT.test(snapshot))) throw new BadRequest(`snapshot must be an id like 20261123T030000000Z, got ${JSON.stringify(snapshot)}`)
      if (target !== undefined && typeof target !== 'string') throw new BadRequest('target must be the name of a configured target')
      return await backups.restore({ name, snapshot: snapshot as string | undefined, target: target as string | undefined })
    })
  }
}
