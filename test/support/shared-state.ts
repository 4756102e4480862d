// The shared state on etcd for tests: the cluster plugin's etcd client (a lease TTL of 5 s: calls
// with a 1 s deadline) and a SharedState on it, both closed when the test ends.
import type { Etcd3 } from 'etcd3'
import { etcdClient, etcdSettings } from '../../plugins/cluster/etcd.js'
import { SharedState, type SharedStateOptions } from '../../plugins/cluster/shared-state/state.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** The cluster plugin's client of `endpoints` at the default lease TTL (unary calls give up after a second). */
export async function testEtcdClient (t: Teardown, endpoints: string[]): Promise<Etcd3> {
  const settings = etcdSettings({ name: 'test', etcd: { endpoints, prefix: '', lease_ttl_seconds: 5, ca_file: '', cert_file: '', key_file: '', username: '', password: '' } })
  if (settings === undefined) throw new Error('no etcd endpoints')
  const client = await etcdClient(settings)
  t.teardown(() => { client.close() })
  return client
}

/** A SharedState on `prefix` through a client of its own. */
export async function openSharedState (t: Teardown, endpoints: string[], prefix: string, options: Partial<SharedStateOptions> = {}): Promise<SharedState> {
  const state = await SharedState.open({ client: await testEtcdClient(t, endpoints), prefix, timeoutMs: 3000, attemptMs: 1000, retryMs: 200, ...options })
  t.teardown(() => { state.close() })
  return state
}
