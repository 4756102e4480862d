// `berth server --join <host:port>`, and `berth cluster info|drain|undrain|forget`: the nodes of the
// cluster through the leader's control API.
import { controlClient, formatTable, type CliRegistry } from '../../kernel/index.js'
import type { MastersReport } from '../cluster/index.js'
import type { NodeRecord } from './node-record.js'

interface Info {
  cluster: { name?: string, leader?: string }
  nodes?: NodeRecord[]
  control_plane?: MastersReport | { error: string }
  agent?: { leader: string, link: string, error?: string, node: string }
}

interface DrainAnswer {
  node: NodeRecord
  moved: Array<{ service: string, replica: number, to: string }>
  unplaced: Array<{ service: string, replica: number }>
}

const GIB = 1024 ** 3

function ago (iso: string | null): string {
  if (iso === null) return 'never'
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))
  return seconds < 120 ? `${seconds}s ago` : `${Math.round(seconds / 60)}m ago`
}

function describeDrain (answer: DrainAnswer, drained: boolean): void {
  const { node, moved, unplaced } = answer
  console.log(`node ${node.name} is ${drained ? 'drained' : 'active again'}`)
  for (const m of moved) console.log(`  ${m.service} replica ${m.replica} → ${m.to}`)
  for (const u of unplaced) console.log(`  ${u.service} replica ${u.replica}: no node takes it`)
  if (drained && moved.length === 0 && unplaced.length === 0) console.log('  it ran no replicas')
}

/** Masters on etcd: the masters (the leader first) and etcd's members. */
function describeControlPlane (plane: MastersReport | { error: string }): void {
  console.log('')
  if ('error' in plane) {
    console.log(`control plane: ${plane.error}`)
    return
  }
  console.log(formatTable(['MASTER', 'ID', 'ROLE', 'ADDRESS'], plane.masters.map(m => [m.name, m.id, m.leader ? 'leader' : 'follower', m.address])))
  console.log('')
  console.log(formatTable(['ETCD MEMBER', 'ENDPOINT', 'HEALTH', 'RAFT'], plane.etcd.map(m => [m.name || '-', m.endpoint || '-', m.healthy ? 'healthy' : `down: ${m.error ?? '?'}`, m.leader ? 'leader' : 'follower'])))
}

export function nodeCommands (cli: CliRegistry): void {
  cli.serverOption({ flags: '--join <host:port>', description: 'run as an agent of the leader whose control listener is at host:port (masters on etcd: host:port,host:port,… tried in turn)', variable: 'BERTH_JOIN' })
  const cluster = cli.program.commands.find(command => command.name() === 'cluster') ??
    cli.program.command('cluster').description('the cluster: its nodes and masters')
  const node = (id: string): string => `/api/v1/cluster/nodes/${encodeURIComponent(id)}`

  cluster.command('info')
    .description('every node: role, state, last heartbeat, engine, capacity and what runs there')
    .option('--json', 'print the cluster info answer as JSON')
    .action(async (options: { json?: boolean }) => {
      const client = await controlClient(cli)
      const info = await client.json<Info>('GET', '/api/v1/cluster/info')
      if (options.json === true) {
        console.log(JSON.stringify(info, null, 2))
        return
      }
      if (info.agent !== undefined) {
        console.log(`agent ${info.agent.node} of the leader at ${info.agent.leader}: ${info.agent.link}${info.agent.error !== undefined ? ` (${info.agent.error})` : ''}`)
        return
      }
      console.log(formatTable(['NAME', 'ROLE', 'STATUS', 'SCHEDULING', 'ADDRESS', 'HEARTBEAT', 'REPLICAS', 'CPU', 'MEMORY', 'ENGINE'], (info.nodes ?? []).map(n => [
        n.name, n.role, n.status, n.scheduling, n.address, ago(n.last_heartbeat),
        n.placed.map(p => `${p.service}:${p.replicas.join(',')}`).join(' ') || '-',
        `${n.allocated.cpus}/${n.capacity.cpus}`, `${(n.allocated.memory_bytes / GIB).toFixed(1)}/${(n.capacity.memory_bytes / GIB).toFixed(1)}G`,
        n.engine.healthy ? `${n.engine.kind ?? ''} ${n.engine.version ?? ''}`.trim() : `down: ${n.engine.error ?? '?'}`
      ])))
      if (info.control_plane !== undefined) describeControlPlane(info.control_plane)
    })

  cluster.command('drain <node>')
    .description('move a node\'s replicas to other nodes and place none there (node name or id); refused when some replica would have nowhere to run')
    .option('--force', 'drain even when replicas no other node can take stop')
    .action(async (id: string, options: { force?: boolean }) => {
      const client = await controlClient(cli)
      describeDrain(await client.json<DrainAnswer>('POST', `${node(id)}/drain${options.force === true ? '?force=true' : ''}`), true)
    })

  cluster.command('undrain <node>')
    .description('let a drained node take replicas again (replicas already moved stay where they are)')
    .action(async (id: string) => {
      const client = await controlClient(cli)
      describeDrain(await client.json<DrainAnswer>('POST', `${node(id)}/undrain`), false)
    })

  cluster.command('forget <node>')
    .description('remove an offline node from the cluster (its pinned services have no node until one of that name joins)')
    .action(async (id: string) => {
      const client = await controlClient(cli)
      const answer = await client.json<{ name: string, forgotten: string }>('DELETE', node(id))
      console.log(`node ${answer.name} (${answer.forgotten}) forgotten`)
    })
}
