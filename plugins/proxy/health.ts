// Health of replicas: a route with a health path has each replica probed on it (2xx or 3xx passes),
// one without is checked by opening a connection. A replica that fails leaves the rotation until a
// probe passes; a connection failure seen by a request asks for a probe at once.
import { connect } from 'node:net'
import { probe } from '../reconciler/probe.js'
import type { Route, Upstream } from './route-table.js'

/** Whether the replica serves: its health path answers, or (without one) it accepts a connection. */
export async function serves (upstream: Upstream, route: Route, timeoutMs: number): Promise<boolean> {
  if (route.health !== undefined) return await probe(upstream, route.health, timeoutMs)
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

/** Probe every replica of every route; returns the replicas whose health changed. */
export async function checkAll (routes: readonly Route[], timeoutMs: number): Promise<Upstream[]> {
  const changed: Upstream[] = []
  await Promise.all(routes.flatMap(route => route.upstreams.map(async upstream => {
    const healthy = await serves(upstream, route, timeoutMs)
    if (healthy !== upstream.healthy) {
      upstream.healthy = healthy
      changed.push(upstream)
    }
  })))
  return changed
}
