// Who a request comes from, for the per-client budgets: the socket's peer, or, when that peer is a
// trusted proxy ([ingest].rate_limit.trusted_proxies), the address X-Forwarded-For gives — read from
// the right, the first hop that is not a trusted proxy. A client not behind a trusted proxy cannot
// choose its address by sending the header.
import { BlockList, isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'
import { StartupError } from '../../kernel/index.js'

export type ClientAddress = (request: FastifyRequest) => string

const familyOf = (address: string): 'ipv4' | 'ipv6' | undefined => {
  const family = isIP(address)
  return family === 4 ? 'ipv4' : family === 6 ? 'ipv6' : undefined
}

/** An IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`, as a dual-stack socket shows it) as the IPv4 address it is. */
function plain (address: string): string {
  const mapped = /^::ffff:(.+)$/i.exec(address)?.[1]
  return mapped !== undefined && isIP(mapped) === 4 ? mapped : address
}

/** The trusted proxies: addresses and CIDR blocks, IPv4 or IPv6; anything else is refused at start. */
function proxyList (entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/')
    const family = familyOf(address)
    const bits = prefix !== undefined && /^\d{1,3}$/.test(prefix) ? Number(prefix) : undefined
    if (family === undefined || rest.length > 0 || (prefix !== undefined && (bits === undefined || bits > (family === 'ipv4' ? 32 : 128)))) {
      throw new StartupError(`[ingest].rate_limit.trusted_proxies: "${entry}" is neither an IP address nor a CIDR block (such as 10.0.0.0/8 or fd00::/8)`)
    }
    if (bits === undefined) list.addAddress(address, family)
    else list.addSubnet(address, bits, family)
  }
  return list
}

export function clientAddress (trustedProxies: readonly string[]): ClientAddress {
  const proxies = proxyList(trustedProxies)
  const trusted = (address: string): boolean => {
    const family = familyOf(address)
    return family !== undefined && proxies.check(address, family)
  }
  return request => {
    let client = plain(request.socket.remoteAddress ?? '')
    if (trustedProxies.length === 0 || !trusted(client)) return client
    const header = request.headers['x-forwarded-for']
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map(hop => plain(hop.trim()))
    for (let i = hops.length - 1; i >= 0 && trusted(client) && isIP(hops[i]) !== 0; i--) client = hops[i]
    return client
  }
}
