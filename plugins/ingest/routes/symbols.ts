// Symbol files: the ELF files uploaded, by software version, and the builds the fleet runs that have
// none, so an engineer sees which crashes cannot be symbolicated and which file to upload.
import type { FastifyInstance } from 'fastify'
import type { Telemetry } from '../telemetry.js'

/** A build the fleet runs: its software type and version as the devices report them, and how many run it. */
interface RunningBuild {
  software_type: string | null
  software_version: string | null
  build_id: string | null
  devices: number
}

export function symbolRoutes (app: FastifyInstance, t: Telemetry): void {
  app.get('/symbols', { config: { telemetryAccess: 'viewer' } }, async () => {
    const files = (await t.storage.elves()).map(({ file: _file, ...record }) => record)
    const known = new Set(files.map(f => f.build_id))
    const running = new Map<string, RunningBuild>()
    for await (const device of t.storage.devices()) {
      if (device.software_version === null && device.build_id === null) continue
      const key = JSON.stringify([device.software_type, device.software_version, device.build_id])
      const build = running.get(key) ?? { software_type: device.software_type, software_version: device.software_version, build_id: device.build_id, devices: 0 }
      build.devices++
      running.set(key, build)
    }
    const byDevices = (a: RunningBuild, b: RunningBuild): number => b.devices - a.devices
    return {
      files: files.sort((a, b) => b.uploaded_at - a.uploaded_at),
      missing: [...running.values()].filter(b => b.build_id === null || !known.has(b.build_id)).sort(byDevices)
    }
  })
}
