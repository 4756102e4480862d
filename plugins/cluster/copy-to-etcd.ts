// `berth cluster copy-to-etcd`: a lone master's control-plane state, from the LMDB store of its state
// directory (the server stopped), into the shared state on the etcd of [cluster].etcd, so that it
// and other masters start on it. Each database in SHARED_DATABASES is copied whole, in transactions
// of up to 100 keys; values are written as the shared state writes them (CBOR), secrets as the
// ciphertext they are (the masters keep the same key file). Imported by the command only.
import { openPluginState } from '../../kernel/runtime-api.js'
import { etcdClient, type EtcdSettings } from './etcd.js'
import { SharedState } from './shared-state/state.js'
import { SharedPluginStore } from './shared-state/view.js'

/**
 * What each control-plane plugin keeps in the shared state, by plugin: the databases it opens through
 * `controlState` (the cluster's own are the nodes plugin's registry and placement). What stays on a
 * master (the reconciler's node id, the proxy's last routing table, the cluster's member id) is not here.
 */
export const SHARED_DATABASES: Readonly<Record<string, readonly string[]>> = {
  tokens: ['tokens'],
  secrets: ['values'],
  webhooks: ['registrations'],
  reconciler: ['services', 'history', 'restarts', 'canaries', 'reloads'],
  proxy: ['certificates', 'acme-accounts'],
  backup: ['last-success'],
  cluster: ['nodes', 'assignment']
}

const BATCH = 100

export class StateAlreadyShared extends Error {}

/** Copy; refuses (StateAlreadyShared) when etcd already holds state under the prefix, unless `force`. Resolves with the keys copied. */
export async function copyToEtcd (stateDir: string, settings: EtcdSettings, force: boolean, say: (line: string) => void): Promise<number> {
  const client = await etcdClient(settings)
  let shared: SharedState | undefined
  try {
    const root = `${settings.prefix}state/`
    const present = await client.getAll().prefix(root).count()
    if (present > 0 && !force) {
      throw new StateAlreadyShared(`etcd already holds ${present} key(s) under ${root}: copying would overwrite what masters share there; give --force to copy anyway`)
    }
    shared = await SharedState.open({ client, prefix: settings.prefix, timeoutMs: 10_000 })
    let copied = 0
    for (const [plugin, databases] of Object.entries(SHARED_DATABASES)) {
      const local = openPluginState(stateDir, plugin)
      try {
        const target = new SharedPluginStore(shared, plugin)
        for (const name of databases) {
          const entries = [...local.store.db<unknown, string>(name).getRange()]
          const db = target.db<unknown>(name)
          for (let i = 0; i < entries.length; i += BATCH) {
            await target.transaction(() => { for (const { key, value } of entries.slice(i, i + BATCH)) void db.put(key, value) })
          }
          if (entries.length > 0) say(`${plugin}/${name}: ${entries.length} key(s)`)
          copied += entries.length
        }
      } finally {
        await local.close()
      }
    }
    return copied
  } finally {
    shared?.close()
    client.close()
  }
}
