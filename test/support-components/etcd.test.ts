// Proves the etcd test support: the run's three members answer and a test file's prefix is emptied at
// its end; a cluster of a test's own keeps serving with one member stopped, refuses writes without a
// quorum (two of three gone), and serves again once they are started on their data.
import t from 'tap'
import { etcdctl, etcdPrefix, ownEtcd, requireEtcd } from '../support/etcd.js'
import { requireComponent } from '../support/component.js'

t.test('the run\'s cluster: three members, a prefix of the file\'s own emptied at the end', async t => {
  const etcd = await requireEtcd(t)
  if (etcd === undefined) return
  t.equal(etcd.endpoints.length, 3)
  let prefix = ''
  await t.test('a test with a prefix', async t => {
    prefix = (await etcdPrefix(t)).prefix
    await etcdctl(etcd.endpoints, ['put', `${prefix}k`, 'v'])
    t.equal(await etcdctl(etcd.endpoints.slice(2), ['get', '--print-value-only', `${prefix}k`]), 'v\n', 'written through one member, read through another')
  })
  t.equal(await etcdctl(etcd.endpoints, ['get', '--prefix', '--keys-only', prefix]), '', 'its keys are gone')
})

t.test('a cluster of the test\'s own: one member stopped, quorum lost, members back', async t => {
  const etcd = await requireComponent(t, 'etcd', async () => await ownEtcd(t))
  if (etcd === undefined) return
  await etcd.stop(0)
  await etcdctl(etcd.endpoints.slice(1), ['put', 'k', 'two of three'])
  await etcd.kill(1)
  await t.rejects(etcdctl(etcd.endpoints.slice(2), ['put', 'k', 'one of three']), 'no write without a quorum')
  await Promise.all([etcd.start(0), etcd.start(1)])
  await etcdctl(etcd.endpoints, ['put', 'k', 'all three'])
  t.equal(await etcdctl(etcd.endpoints.slice(0, 1), ['get', '--print-value-only', 'k']), 'all three\n')
})
