// Active health of replicas: one failed probe leaves a replica in rotation (a late answer on a busy
// host), the second in a row takes it out, and a passing probe brings it back; a replica found
// failing by requests must answer HTTP to come back.
import t from 'tap'
import { createServer, type Server } from 'node:net'
import { checkAll, PROBE_FALLS } from '../../../plugins/proxy/health.js'
import { RouteTable } from '../../../plugins/proxy/route-table.js'
import { container, listen, spec } from '../../support/proxy.js'

t.test('a replica leaves the rotation after PROBE_FALLS failed probes in a row, and comes back at the first pass', async t => {
  const replica: Server = createServer(socket => { socket.destroy() })
  const port = await listen(t, replica)
  const table = new RouteTable()
  table.replace([spec('tcp.test', 1)], [container('tcp', 1, port)], '')
  const route = table.routes[0]
  const upstream = route.upstreams[0]
  t.equal(PROBE_FALLS, 2)
  t.same(await checkAll(table.routes, 500), [], 'a replica that accepts connections stays')
  await new Promise<void>(resolve => { replica.close(() => { resolve() }) })
  t.same(await checkAll(table.routes, 500), [], 'one failed probe: still in rotation')
  t.equal(upstream.healthy, true)
  t.same(await checkAll(table.routes, 500), [upstream], 'the second in a row: out')
  t.equal(upstream.healthy, false)
  const again = createServer(socket => { socket.destroy() })
  await new Promise<void>(resolve => again.listen(port, '127.0.0.1', resolve))
  t.teardown(() => { again.close() })
  t.same(await checkAll(table.routes, 500), [upstream], 'a passing probe brings it back')
  t.same([upstream.healthy, upstream.missedProbes], [true, 0])
  upstream.failures = 1
  t.same(await checkAll(table.routes, 500), [], 'found failing by requests, a connection alone keeps it in (one miss)')
  t.same(await checkAll(table.routes, 500), [upstream], 'but the second probe without an HTTP answer takes it out')
})
