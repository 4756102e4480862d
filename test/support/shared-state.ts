// The shared state on etcd for tests: an etcd3 client with short deadlines and a SharedState on it,
// both closed when the test ends.
import { Etcd3 } from 'etcd3'
import { SharedState, type SharedStateOptions } from '../../plugins/cluster/shared-state/state.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** A client of `endpoints` whose unary calls give up after a second (as the cluster plugin's do at the default TTL). */
export function testEtcdClient (t: Teardown, endpoints: string[]): Etcd3 {
  const client = new Etcd3({ hosts: endpoints, dialTimeout: 1000, defaultCallOptions: context => context.isStream ? {} : { deadline: Date.now() + 1000 } })
  t.teardown(() => { client.close() })
  return client
}

/** A SharedState on `prefix` through a client of its own. */
export async function openSharedState (t: Teardown, endpoints: string[], prefix: string, options: Partial<SharedStateOptions> = {}): Promise<SharedState> {
  const state = await SharedState.open({ client: testEtcdClient(t, endpoints), prefix, timeoutMs: 3000, attemptMs: 1000, retryMs: 200, ...options })
  t.teardown(() => { state.close() })
  return state
}
