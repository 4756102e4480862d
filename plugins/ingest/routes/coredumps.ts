// A fault's coredump (firmware/README.md, BERTH_COREDUMP): the regions the device captured at the fault
// and the named globals of its build's ELF that lie inside them, with their values.
import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import { NotFound } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { coredumpView, type CoredumpView } from '../coredump.js'
import { localElf } from '../elf-files.js'
import { objectSymbols, type ObjectSymbol } from '../elf.js'
import { DeviceId } from '../keys.js'
import type { StoredFault } from '../store.js'
import type { Telemetry } from '../telemetry.js'

const FaultParams = Type.Object({
  id: DeviceId,
  received_at: Type.Integer({ minimum: 0 }),
  sequence: Type.Integer({ minimum: 0, maximum: 0xffffffff })
})

/** The data objects of the fault's build, or why there are none. */
async function symbolsOf (t: Telemetry, fault: StoredFault): Promise<ObjectSymbol[] | string> {
  if (fault.build_id === null) return 'the device reported no build id'
  const elf = await t.storage.elf(fault.build_id)
  if (elf === undefined) return `no ELF uploaded for build ${fault.build_id}`
  const path = await localElf(t.storage, t.elfDir, elf)
  if (path === undefined) return `the ELF file of build ${fault.build_id} is missing from the ELF directory; upload it again`
  const symbols = objectSymbols(await readFile(path))
  return symbols.length > 0 ? symbols : `the ELF of build ${fault.build_id} has no symbol table`
}

export function coredumpRoutes (app: FastifyInstance, t: Telemetry): void {
  app.get<{ Params: Static<typeof FaultParams> }>('/devices/:id/faults/:received_at/:sequence/coredump', {
    config: { telemetryAccess: 'viewer' }, schema: { params: FaultParams }
  }, async (request): Promise<CoredumpView & { device: string, received_at: number, sequence: number, build_id: string | null }> => {
    const { id, received_at: at, sequence } = request.params
    const fault = await t.storage.fault([id, at, sequence])
    if (fault === undefined) throw new NotFound(`device ${id} has no fault received at ${at} with sequence ${sequence}`)
    if (fault.coredump === undefined || fault.coredump === null) throw new NotFound(`the fault of device ${id} received at ${at} (sequence ${sequence}) has no coredump`)
    return { device: id, received_at: at, sequence, build_id: fault.build_id, ...coredumpView(fault.coredump, await symbolsOf(t, fault)) }
  })
}
