// Start and stop a kernel 50 times in one process: no handle, timer, socket or file may stay open.
import t from 'tap'
import { definePlugin } from '../../kernel/index.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'

const busy = definePlugin({
  name: 'busy',
  version: '1',
  listeners: [{ name: 'busy', port: 6897 }],
  setup (ctx) {
    const db = ctx.store.db<number>('counts')
    ctx.schedule.every('tick', 5, async () => { await db.put('ticks', (db.get('ticks') ?? 0) + 1) })
    ctx.schedule.cron('nightly', '0 0 3 * * *', () => {})
    ctx.events.on('plugin.state', () => {})
    ctx.http('busy', async app => { app.get('/ping', async () => ({ pong: true })) })
  }
})

function openResources (): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

t.test('50 start/stop cycles leave nothing open', async t => {
  const cycle = async (): Promise<void> => {
    const kernel = await testKernel(t, { plugins: [busy] })
    const response = await fetch(new URL('/ping', kernel.url('busy')), { headers: { connection: 'keep-alive' } })
    t.equal(response.status, 200)
    await response.arrayBuffer()
    await kernel.stop()
  }
  // A closed handle leaves libuv's list a loop turn after close() resolves; this process owns no
  // sockets of its own, so once the kernel is stopped their number must reach zero. A file system
  // request still in flight (FSReqCallback: a cache or log write the first cycle set off, seen on a
  // loaded machine) is no open resource: it is waited out too, so that it is in neither count.
  const noSockets = async (): Promise<Record<string, number>> => await pollUntil(() => {
    const open = openResources()
    return open.TCPServerWrap === undefined && open.TCPSocketWrap === undefined && open.FSReqCallback === undefined && open
  }, { timeout: 2000, what: 'every server and socket to close and every file system request to end' })
  await cycle()
  const before = await noSockets()
  for (let i = 0; i < 50; i++) await cycle()
  t.same(await noSockets(), before, 'the same open resources as after the first cycle')
})
