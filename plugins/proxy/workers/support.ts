// Whether this host can run the proxy's listeners on several event loops: each thread binds the same
// address with SO_REUSEPORT (net's `reusePort`), which Node offers from 22.12 and 23.1 on and which
// the proxy relies on on Linux only (where the system spreads new connections over the sockets).
import { availableParallelism } from 'node:os'

/** Why several event loops cannot serve here, or undefined when they can. */
export function reusePortUnsupported (platform: string = process.platform, version: string = process.versions.node): string | undefined {
  if (platform !== 'linux') return `SO_REUSEPORT is used on Linux only, and this is ${platform}`
  const [major, minor] = version.split('.').map(Number)
  if (major < 22 || (major === 22 && minor < 12) || (major === 23 && minor < 1)) return `Node ${version} cannot bind with reusePort (22.12 or later can)`
  return undefined
}

/** The event loops the proxy runs on by default: one per core (at most `max`) where several can serve, else one. */
export function defaultWorkers (max: number): number {
  return reusePortUnsupported() === undefined ? Math.min(availableParallelism(), max) : 1
}
