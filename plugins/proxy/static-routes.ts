// Static routes: `[proxy.routes.<name>]` sends a domain to a fixed list of `host:port` addresses
// that are not containers (processes of this host, other machines), as Caddy's `reverse_proxy a b c`
// does. They become routes of the same table as the services' (RouteRecord), so their upstreams get
// the same balancing, health probes, max_fails and retries. Checked at setup, with errors that name
// the key.
import { isIP } from 'node:net'
import type { RouteRecord, UpstreamRecord } from './route-table.js'

/** One `[proxy.routes.<name>]` table as the schema admits it. */
export interface StaticRouteConfig {
  domain: string
  upstreams: string[]
  health_path?: string
}

/** Ids of static upstreams begin with this (container ids never contain `/`). */
const STATIC_ID = 'route:'
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/
const PORT = /^[0-9]{1,5}$/

/** The routes of `[proxy.routes]`, as records of the routing table; throws on the first problem. */
export function staticRoutes (routes: Readonly<Record<string, StaticRouteConfig>>): RouteRecord[] {
  const records: RouteRecord[] = []
  const owners = new Map<string, string>()
  for (const [name, route] of Object.entries(routes)) {
    const key = `[proxy].routes.${name}`
    const domain = route.domain.toLowerCase().replace(/\.$/, '')
    if (!isDomain(domain)) throw new Error(`${key}.domain: "${route.domain}" is not a domain name (such as "ingest.example.com", without scheme, port or path)`)
    const owner = owners.get(domain)
    if (owner !== undefined) throw new Error(`${key}.domain: "${domain}" is already routed by [proxy].routes.${owner}`)
    owners.set(domain, name)
    if (route.upstreams.length === 0) throw new Error(`${key}.upstreams: empty; list at least one "host:port" address`)
    const upstreams = route.upstreams.map((text, i): UpstreamRecord => {
      const address = parseAddress(text)
      if (address === undefined) throw new Error(`${key}.upstreams[${i}]: "${text}" is not a "host:port" address (an IP address, [IPv6] or a host name, and a port 1–65535)`)
      return { id: `${STATIC_ID}${name}/${text}`, container: text, replica: i + 1, canary: false, ...address }
    })
    const twice = route.upstreams.find((text, i) => route.upstreams.indexOf(text) !== i)
    if (twice !== undefined) throw new Error(`${key}.upstreams: "${twice}" is listed twice`)
    if (route.health_path !== undefined && !route.health_path.startsWith('/')) throw new Error(`${key}.health_path: "${route.health_path}" must be a path beginning with "/"`)
    records.push({ domain, service: name, project: '', port: 0, static: true, ...(route.health_path !== undefined && { health: route.health_path }), upstreams })
  }
  return records
}

/** Where a static route's domain is also a deployed service's: the problem, naming both. */
export function claimedDomain (statics: readonly RouteRecord[], service: string, domain: string | undefined): string | undefined {
  const route = statics.find(r => r.domain === domain?.toLowerCase())
  return route === undefined ? undefined : `service "${service}": domain "${route.domain}" is routed by [proxy].routes.${route.service} (a static route); a domain has one owner`
}

function isDomain (name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every(label => LABEL.test(label))
}

/** `host:port` (`[v6]:port` for IPv6): the host and the port, or undefined when it is not one. */
export function parseAddress (text: string): { host: string, port: number } | undefined {
  const colon = text.lastIndexOf(':')
  if (colon <= 0) return undefined
  const rawHost = text.slice(0, colon)
  const portText = text.slice(colon + 1)
  const port = Number(portText)
  if (!PORT.test(portText) || port < 1 || port > 65535) return undefined
  if (rawHost.startsWith('[')) {
    const host = rawHost.slice(1, -1)
    return rawHost.endsWith(']') && isIP(host) === 6 ? { host, port } : undefined
  }
  const host = rawHost.toLowerCase()
  return isIP(host) === 4 || isDomain(host) ? { host, port } : undefined
}
