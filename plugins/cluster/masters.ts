// Who runs the control plane, for `berth cluster info` and the health report: the masters alive (each
// listed under `<prefix>masters/` on its lease), which one leads, and every etcd member with its
// health (its /health answer on its client URL) and whether it leads etcd's own raft group.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Etcd3 } from 'etcd3'
import { messageOf } from '../../kernel/index.js'
import type { EtcdSettings } from './etcd.js'
import type { LeaderIdentity } from './leadership.js'

export interface MasterRecord extends LeaderIdentity {
  leader: boolean
}

export interface EtcdMemberRecord {
  name: string
  endpoint: string
  healthy: boolean
  /** Leads etcd's raft group, as the member this master asked says. */
  leader: boolean
  error?: string
}

export interface MastersReport {
  leader: LeaderIdentity | null
  masters: MasterRecord[]
  etcd: EtcdMemberRecord[]
}

const HEALTH_TIMEOUT_MS = 1000

/** Ask `endpoint`/health; resolves with why it is not healthy, or undefined when it is. */
async function memberProblem (endpoint: string, settings: EtcdSettings): Promise<string | undefined> {
  const url = new URL('/health', endpoint)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const tls = settings.credentials === undefined ? {} : { ca: settings.credentials.rootCertificate, cert: settings.credentials.certChain, key: settings.credentials.privateKey }
  return await new Promise(resolve => {
    const asked = send(url, { ...tls, timeout: HEALTH_TIMEOUT_MS }, answer => {
      let body = ''
      answer.setEncoding('utf8')
      answer.on('data', (chunk: string) => { body += chunk })
      answer.on('end', () => {
        try {
          resolve((JSON.parse(body) as { health?: string }).health === 'true' ? undefined : `unhealthy: ${body.trim().slice(0, 200)}`)
        } catch {
          resolve(`answered ${answer.statusCode ?? '?'} without a health report`)
        }
      })
    })
    asked.on('timeout', () => { asked.destroy(new Error(`no answer within ${HEALTH_TIMEOUT_MS} ms`)) })
    asked.on('error', err => { resolve(messageOf(err)) })
    asked.end()
  })
}

export async function describeMasters (client: Etcd3, settings: EtcdSettings, leader: LeaderIdentity | undefined): Promise<MastersReport> {
  const [listed, members, status] = await Promise.all([
    client.getAll().prefix(`${settings.prefix}masters/`).strings(),
    client.cluster.memberList({}),
    client.maintenance.status().catch(() => undefined)
  ])
  const masters = Object.values(listed).flatMap(text => {
    try {
      const master = JSON.parse(text) as LeaderIdentity
      return [{ id: master.id, name: master.name, address: master.address, leader: master.id === leader?.id }]
    } catch {
      return []
    }
  }).sort((a, b) => Number(b.leader) - Number(a.leader) || a.name.localeCompare(b.name))
  const etcd = await Promise.all(members.members.map(async member => {
    const endpoint = member.clientURLs[0] ?? ''
    const problem = endpoint === '' ? 'no client URL (not started yet)' : await memberProblem(endpoint, settings)
    return { name: member.name, endpoint, healthy: problem === undefined, leader: member.ID === status?.leader, ...(problem !== undefined && { error: problem }) }
  }))
  return { leader: leader ?? null, masters, etcd }
}
