// Leadership among masters on a real etcd (three members on loopback): contenders run in processes of
// their own (test/fixtures/cluster/contender.ts), so that kill -9, SIGSTOP and SIGCONT are real.
// Exactly one leads; a leader paused past its lease cannot write when it wakes and says it no longer
// leads; an etcd member killed changes nothing. (A killed leader replaced: the masters'
// tests, test/plugins/cluster/masters.test.ts and test/e2e/masters.test.ts, kill real servers.)
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { etcdctl, ownEtcd, raftLeaderIndex, requireEtcd } from '../../support/etcd.js'
import { requireComponent } from '../../support/component.js'
import { isRunning } from '../../support/daemon.js'
import { pollUntil } from '../../support/poll.js'

const CONTENDER = fileURLToPath(new URL('../../fixtures/cluster/contender.ts', import.meta.url))
const TTL_MS = 5000

interface Said {
  event: string
  at: number
  result?: string
  reason?: string
  leading?: boolean
  leader?: { id: string, name: string, address: string }
}

interface Contender {
  id: string
  child: ChildProcess
  said: Said[]
  /** The first line `event` said at or after index `from` that passes `test`, within `timeout` ms. */
  next(event: string, options?: { from?: number, timeout?: number, test?: (said: Said) => boolean }): Promise<Said>
  /** Send a command and wait for its answer. */
  ask(command: string): Promise<Said>
}

interface Teardown { teardown(fn: () => void | Promise<void>): void }

function contender (t: Teardown, endpoints: string[], prefix: string, id: string): Contender {
  // The child gets the TypeScript loader only, not tap's coverage and other hooks.
  const { NODE_OPTIONS: _hooks, ...env } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', CONTENDER, JSON.stringify({ endpoints, prefix, id, name: id })], {
    env, stdio: ['pipe', 'pipe', 'inherit']
  })
  const said: Said[] = []
  let rest = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n')
    rest = lines.pop() ?? ''
    for (const line of lines) said.push(JSON.parse(line) as Said)
  })
  t.teardown(async () => {
    if (child.pid === undefined || !isRunning(child.pid)) return
    child.kill('SIGKILL')
    await new Promise(resolve => child.once('exit', resolve))
  })
  const next: Contender['next'] = async (event, { from = 0, timeout = 20_000, test = () => true } = {}) =>
    await pollUntil(() => said.slice(from).find(line => line.event === event && test(line)), { timeout, what: `${id} to say ${event}` })
  return {
    id,
    child,
    said,
    next,
    ask: async command => {
      const from = said.length
      child.stdin?.write(`${command}\n`)
      return await next(command, { from })
    }
  }
}

const leaders = (contenders: Contender[]): Contender[] => contenders.filter(c => c.said.some(line => line.event === 'elected'))

/** Start contenders and wait until one leads and every other one names it; that one. */
async function elect (t: Teardown, endpoints: string[], prefix: string, ids: string[]): Promise<{ leader: Contender, others: Contender[] }> {
  const all = ids.map(id => contender(t, endpoints, prefix, id))
  const leader = await pollUntil(() => leaders(all).length > 0 && leaders(all)[0], { timeout: 30_000, what: 'a leader' })
  const others = all.filter(c => c !== leader)
  await Promise.all(others.map(async c => await c.next('leader', { test: line => line.leader?.id === leader.id })))
  return { leader, others }
}

const etcd = await requireEtcd(t)

if (etcd !== undefined) {
  t.test('exactly one of three leads; the others name it; a clean stop hands over at once', async t => {
    const prefix = `${etcd.prefix}one/`
    const { leader, others } = await elect(t, etcd.endpoints, prefix, ['a', 'b', 'c'])
    t.equal(leaders([leader, ...others]).length, 1, 'one elected')
    const states = await Promise.all([leader, ...others].map(async c => await c.ask('state')))
    t.same(states.map(s => s.leading), [true, false, false], 'only the leader says it leads')
    t.ok(states.every(s => s.leader?.id === leader.id), 'all name the same leader')
    t.same(JSON.parse(await etcdctl(etcd.endpoints, ['get', '--print-value-only', `${prefix}leader`])), { id: leader.id, name: leader.id, address: '127.0.0.1:6880' })
    t.equal((await leader.ask('write')).result, 'applied', 'the leader\'s fenced write applies')
    t.equal((await others[0].ask('write')).result, 'not-leader', 'a follower\'s is refused before it is sent')

    await leader.ask('stop')
    // Its stop resigned: the leader key no longer names it (left to expire, it would for the lease's 5 s).
    const held = await etcdctl(etcd.endpoints, ['get', '--print-value-only', `${prefix}leader`])
    t.not(held.trim() === '' ? undefined : (JSON.parse(held) as { id: string }).id, leader.id, 'resigning hands over before the lease could expire: the key is not its own once it has stopped')
    const successor = await pollUntil(() => leaders(others)[0], { timeout: 10_000, what: 'a successor' })
    await successor.next('elected')
    t.equal(leaders(others).length, 1, 'one successor')
  })

  t.test('a leader paused past its lease cannot write when it wakes, and knows it no longer leads', async t => {
    const prefix = `${etcd.prefix}pause/`
    const { leader, others: [follower] } = await elect(t, etcd.endpoints, prefix, ['a', 'b'])
    const pid = leader.child.pid as number
    process.kill(pid, 'SIGSTOP')
    t.teardown(() => { if (isRunning(pid)) process.kill(pid, 'SIGCONT') })
    const from = leader.said.length
    await follower.next('elected', { timeout: 15_000 })
    process.kill(pid, 'SIGCONT')
    t.equal((await leader.ask('stale-write')).result, 'refused', 'etcd refuses a write under the old term')
    const lost = await leader.next('lost', { from })
    t.match(lost.reason, /lease|fenced|changed hands|removed/, `it gave up: ${lost.reason ?? ''}`)
    t.equal((await leader.ask('write')).result, 'not-leader', 'it refuses to act')
    t.equal((await leader.ask('state')).leading, false, 'it says it does not lead')
    t.equal(await etcdctl(etcd.endpoints, ['get', '--print-value-only', `${prefix}work`]), '', 'nothing written on stale authority')
    t.equal((await follower.ask('write')).result, 'applied', 'the new leader writes')
    await leader.next('leader', { from, test: line => line.leader?.id === follower.id })
  })
}

t.test('an etcd member killed: the leader keeps its lease and writes on', async t => {
  const cluster = await requireComponent(t, 'etcd', async () => await ownEtcd(t))
  if (cluster === undefined) return
  const { leader, others: [follower] } = await elect(t, cluster.endpoints, '/berth-test/member/', ['a', 'b'])
  // Kill the member that leads etcd's own raft group: the hardest case (an election among the others).
  const index = await raftLeaderIndex(cluster.endpoints)
  const killedAt = Date.now()
  await cluster.kill(index)
  // Once a write applies more than a TTL after the kill, the lease was renewed through the others.
  await pollUntil(async () => {
    const answer = await leader.ask('write')
    return answer.result === 'applied' && answer.at > killedAt + TTL_MS + 1000
  }, { timeout: 30_000, interval: 250, what: 'a fenced write a TTL after the kill' }).catch((err: Error) => {
    const since = leader.said.filter(line => line.at >= killedAt && !(line.event === 'write' && line.result === 'applied'))
    throw new Error(`${err.message}; the leader said since the kill: ${JSON.stringify(since.slice(0, 20))}`)
  })
  t.same(leader.said.filter(line => line.event === 'lost').map(line => line.reason), [], 'the leader never lost its leadership')
  t.notOk(follower.said.some(line => line.event === 'elected'), 'nobody else was elected')
  t.notOk(leader.said.some(line => line.event === 'write' && line.result === 'refused'), 'no fenced write was refused')
  await cluster.start(index)
  t.equal((await leader.ask('write')).result, 'applied', 'and with the member back')
})
