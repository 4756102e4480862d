// `berth tui`: the cluster in the terminal, drawn with ink (React for command-line apps: maintained,
// and already what this project's test runner draws with). Services with their replicas' states,
// CPU and memory (the engine's figures of this node's containers) and routes' certificates, nodes, recent deploys and the last webhook invocations, read from the
// control API every REFRESH_MS, with a service's canary; ↑/↓ select a service, + and - scale it, r
// restarts it, l shows its last log lines, p promotes its canary, b rolls it back, q quits.
import { createElement as h, useEffect, useState, type ReactElement } from 'react'
import { Box, render, Text, useApp, useInput } from 'ink'
import type { ApiClient } from '../../kernel/index.js'
import type { ClusterInfo } from './cluster-info.js'
import type { HistoryEntry } from './state.js'
import { serviceFigures } from './stats-format.js'
import type { ServiceStatus } from './status.js'

const REFRESH_MS = 2000
const LOG_LINES = 12

interface Invocation { at: string, sha: string, outcome: string, duration_ms: number }
interface Snapshot {
  services: ServiceStatus[]
  nodes: ClusterInfo['nodes']
  deploys: HistoryEntry[]
  /** Webhook id → its last invocations; undefined when the server runs no webhooks plugin. */
  webhooks?: Array<{ id: string, repo: string, service_name: string, invocations: Invocation[] }>
}

async function snapshot (client: ApiClient): Promise<Snapshot> {
  const [{ services }, { nodes }, { deploys }] = await Promise.all([
    client.json<{ services: ServiceStatus[] }>('GET', '/api/v1/status?stats=true'),
    client.json<ClusterInfo>('GET', '/api/v1/cluster/info'),
    client.json<{ deploys: HistoryEntry[] }>('GET', '/api/v1/deploys')
  ])
  const hooks = await client.json<{ webhooks: Array<{ id: string, repo: string, service_name: string }> }>('GET', '/api/v1/webhooks').catch(() => undefined)
  const webhooks = hooks === undefined
    ? undefined
    : await Promise.all(hooks.webhooks.map(async w => ({ ...w, invocations: (await client.json<{ invocations: Invocation[] }>('GET', `/api/v1/webhooks/${w.id}/history`)).invocations })))
  return { services, nodes, deploys, webhooks }
}

function Dashboard ({ client }: { client: ApiClient }): ReactElement {
  const { exit } = useApp()
  const [data, setData] = useState<Snapshot | undefined>(undefined)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const [selected, setSelected] = useState(0)
  const [message, setMessage] = useState('')
  const [logs, setLogs] = useState<string | undefined>(undefined)
  const [tick, setTick] = useState(0)

  useEffect(() => {
    let stop = false
    const load = (): void => {
      snapshot(client).then(s => { if (!stop) { setData(s); setFailure(undefined) } }, (err: Error) => { if (!stop) setFailure(err.message) })
    }
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => { stop = true; clearInterval(timer) }
  }, [tick])

  const service = data?.services[Math.min(selected, (data?.services.length ?? 1) - 1)]
  const act = (what: string, work: () => Promise<unknown>): void => {
    setMessage(`${what}…`)
    work().then(() => { setMessage(`${what}: done`); setTick(tick + 1) }, (err: Error) => { setMessage(`${what}: ${err.message}`) })
  }
  useInput((input, key) => {
    if (input === 'q') exit()
    else if (key.upArrow) setSelected(Math.max(0, selected - 1))
    else if (key.downArrow) setSelected(Math.min((data?.services.length ?? 1) - 1, selected + 1))
    else if (service === undefined) return
    else if (input === '+' || input === '-') {
      const replicas = Math.max(0, service.replicas + (input === '+' ? 1 : -1))
      act(`scaling ${service.name} to ${replicas}`, async () => await client.json('POST', `/api/v1/services/${service.name}/scale`, { replicas }))
    } else if (input === 'r') act(`restarting ${service.name}`, async () => await client.json('POST', `/api/v1/services/${service.name}/restart`))
    else if (input === 'p') act(`promoting ${service.name}`, async () => await client.json('POST', `/api/v1/services/${service.name}/promote`))
    else if (input === 'b') act(`rolling back ${service.name}`, async () => await client.json('POST', `/api/v1/services/${service.name}/rollback`))
    else if (input === 'l') {
      client.text(`/api/v1/services/${service.name}/logs?tail=${LOG_LINES}`).then(setLogs, (err: Error) => { setLogs(`no logs: ${err.message}`) })
    }
  })

  if (data === undefined) return h(Text, null, failure ?? 'connecting…')
  const row = (cells: string[], widths: number[]): string => cells.map((c, i) => c.slice(0, widths[i] - 1).padEnd(widths[i])).join('')
  const widths = [24, 10, 18, 8, 11, 44]
  return h(Box, { flexDirection: 'column' },
    h(Text, { bold: true }, `berth · ${data.nodes.map(n => `${n.name} (${n.role}, ${n.status})`).join(', ')}${failure !== undefined ? ` · ${failure}` : ''}`),
    h(Text, { dimColor: true }, row(['SERVICE', 'REPLICAS', 'STATUS', 'CPU', 'MEMORY', 'ROUTE / CERTIFICATE'], widths)),
    ...data.services.map((s, i) => ({ s, i, figures: serviceFigures(s) })).map(({ s, i, figures }) => h(Text, { key: s.name, inverse: s === service },
      row([s.name, `${s.running_replicas}/${s.replicas}`, s.canary === undefined ? s.status : `${s.status} +canary`, figures.cpu, figures.memory, s.route === undefined ? '' : `${s.route.domain}${s.route.path_prefix ?? ''} ${s.route.certificate.status}${s.route.certificate.not_after !== undefined ? ` until ${s.route.certificate.not_after.slice(0, 10)}` : ''}`], widths) +
      (i === selected ? `  ${s.containers.map(c => `${c.canary === true ? 'canary' : c.replica}:${c.state}${c.health !== undefined ? `/${c.health}` : ''}${c.node !== undefined ? `@${c.node}` : ''}`).join(' ')}` : ''))),
    ...(service?.canary === undefined
      ? []
      : [h(Text, { key: 'canary' }, `Canary of ${service.name}: ${service.canary.image} (${service.canary.hash.slice(0, 12)}) takes ${service.canary.weight}% of requests${service.canary.running ? '' : ', not running'} · p promote · b roll back`)]),
    h(Text, { bold: true }, 'Recent deploys'),
    ...data.deploys.slice(-5).reverse().map(d => h(Text, { key: `${d.at}${d.trigger}` }, `${d.at.slice(0, 19)}  ${d.trigger.padEnd(9)} ${d.services.map(s => s.name).join(', ')}${d.errors.length > 0 ? `  (${d.errors.length} failed)` : ''}`)),
    ...(data.webhooks === undefined
      ? []
      : [h(Text, { bold: true, key: 'wh' }, 'Webhooks'), ...data.webhooks.map(w => h(Text, { key: w.id },
          `${w.id} ${w.repo} → ${w.service_name}: ${w.invocations.slice(0, 10).map(i => `${i.sha.slice(0, 7)} ${i.outcome}`).join(', ') || 'no invocations yet'}`))]),
    ...(logs === undefined ? [] : [h(Text, { bold: true, key: 'lt' }, `Logs of ${service?.name ?? ''}`), h(Text, { key: 'l' }, logs.trimEnd())]),
    h(Text, { dimColor: true }, `↑/↓ select · + - scale · r restart · l logs · p promote · b roll back · q quit${message !== '' ? `   ${message}` : ''}`)
  )
}

/** Draw until q or Ctrl-C. */
export async function runTui (client: ApiClient): Promise<void> {
  const app = render(h(Dashboard, { client }))
  await app.waitUntilExit()
}
