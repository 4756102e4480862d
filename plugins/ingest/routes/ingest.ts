// POST /ingest/chunks (device key) and POST /ingest/elf (device key or a provisioner).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequest, UnsupportedMediaType } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { saveElf } from '../elf-files.js'
import { ELF_MACHINE_ARM, inspectElf } from '../elf.js'
import type { Telemetry } from '../telemetry.js'

/** Names an ELF upload may carry: 1–64 printable characters each (as OTA targets' software_type and version). */
export const Label = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\x00-\\x1f\\x7f]*$' })
const ElfQuery = Type.Object({ software_type: Type.Optional(Label), software_version: Type.Optional(Label) })

/** The raw body of an application/octet-stream request; anything else is refused. */
export function binaryBody (request: FastifyRequest, what: string): Buffer {
  const type = request.headers['content-type']?.split(';')[0].trim().toLowerCase()
  if (type !== 'application/octet-stream') throw new UnsupportedMediaType(`unsupported content type: ${type ?? 'none'}; send ${what} as application/octet-stream`)
  const body = request.body
  if (!Buffer.isBuffer(body) || body.length === 0) throw new BadRequest(`empty body: expected ${what}`)
  return body
}

export function ingestRoutes (app: FastifyInstance, t: Telemetry): void {
  app.post('/ingest/chunks', { config: { telemetryAccess: 'device' }, bodyLimit: t.settings.max_body_bytes }, async request => {
    const body = binaryBody(request, 'one or more frames')
    const { summary, events } = await t.ingestor.ingest(body)
    for (const status of ['accepted', 'duplicate', 'partial', 'rejected'] as const) if (summary[status] > 0) t.frames.labels(status).inc(summary[status])
    const reuses = summary.frames.filter(f => f.sequence_reused === true).length
    if (reuses > 0) t.sequenceReuses.inc(reuses)
    t.publish(events)
    return summary
  })

  // Parameters are checked before anything is written (fastify validates them before the handler runs).
  app.post<{ Querystring: Static<typeof ElfQuery> }>('/ingest/elf', {
    config: { telemetryAccess: 'device-or-provisioner' },
    bodyLimit: t.settings.elf_max_bytes,
    schema: { querystring: ElfQuery }
  }, async (request, reply) => {
    const body = binaryBody(request, 'an ELF file')
    const inspected = inspectElf(body)
    if (!inspected.ok) throw new BadRequest(inspected.reason)
    if (inspected.info.machine !== ELF_MACHINE_ARM) throw new BadRequest(`not an ARM image (ELF machine ${inspected.info.machine}; ARM is 40): faults are resolved with arm-none-eabi-addr2line`)
    const { software_type: type = null, software_version: version = null } = request.query
    const id = inspected.info.buildId ?? inspected.info.sha1
    const file = saveElf(t.elfDir, id, body)
    const record = { build_id: id, software_type: type, software_version: version, size: body.length, file, uploaded_at: Date.now() }
    await t.storage.putElf({ record, version: version !== null ? `${type ?? 'main'}@${version}` : null, bytes: t.storage.backend === 'lmdb' ? undefined : body })
    t.publish([{ kind: 'elf', build_id: id, at: record.uploaded_at }])
    return await reply.code(201).send({ build_id: id, has_build_id: inspected.info.buildId !== undefined, size: body.length, software_type: type, software_version: version })
  })
}
