// Health of replicas: a route with a health path has each replica probed on it (2xx or 3xx passes).
// One without is checked by opening a connection, or, for a replica that requests found failing, by
// asking it `GET /` (any answer passes): a frozen container behind the engine's port forwarder still
// accepts connections. A replica in rotation leaves it after PROBE_FALLS failed probes in a row (one
// late answer on a busy host takes no replica out), and comes back as soon as a probe passes.
import { request } from 'node:http'
import { connect } from 'node:net'
import { probe } from '../reconciler/api.js'
import type { Route, Upstream } from './route-table.js'

/** Whether the replica serves: its health path answers, or (without one) it accepts a connection, and answers HTTP after failed requests. */
export async function serves (upstream: Upstream, route: Route, timeoutMs: number): Promise<boolean> {
  if (route.health !== undefined) return await probe(upstream, route.health, timeoutMs)
  if (upstream.failures > 0) return await answers(upstream, timeoutMs)
  return await new Promise<boolean>(resolve => {
    const socket = connect({ host: upstream.host, port: upstream.port })
    const done = (ok: boolean): void => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => { done(false) })
    socket.once('connect', () => { done(true) })
    socket.once('error', () => { done(false) })
  })
}

/** Whether `GET /` gets a response head, of any status, within `timeoutMs`. */
async function answers (upstream: Upstream, timeoutMs: number): Promise<boolean> {
  return await new Promise<boolean>(resolve => {
    const asked = request({ host: upstream.host, port: upstream.port, path: '/', agent: false, timeout: timeoutMs }, response => {
      response.destroy()
      resolve(true)
    })
    asked.on('timeout', () => { asked.destroy() })
    asked.on('error', () => { resolve(false) })
    asked.end()
  })
}

/** Failed probes in a row that take a replica in rotation out of it. */
export const PROBE_FALLS = 2

/** Probe every replica of every route; returns the replicas whose health changed. */
export async function checkAll (routes: readonly Route[], timeoutMs: number): Promise<Upstream[]> {
  const changed: Upstream[] = []
  // A replica is in the route of each of its service's names: probed once.
  const replicas = new Map<string, { upstream: Upstream, route: Route }>()
  for (const route of routes) for (const upstream of route.upstreams) if (!replicas.has(upstream.id)) replicas.set(upstream.id, { upstream, route })
  await Promise.all([...replicas.values()].map(async ({ upstream, route }) => {
    if (await serves(upstream, route, timeoutMs)) {
      upstream.missedProbes = 0
      if (upstream.healthy) return
      Object.assign(upstream, { healthy: true, failures: 0 })
      changed.push(upstream)
      return
    }
    upstream.missedProbes++
    if (!upstream.healthy || upstream.missedProbes < PROBE_FALLS) return
    upstream.healthy = false
    changed.push(upstream)
  }))
  return changed
}
