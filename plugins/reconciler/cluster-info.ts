// The answer of GET /api/v1/cluster/info on a single node: the cluster's instance name and this
// node's record (id, name, role, address, engine state, services).
import type { ContainerEngine, EngineInfo } from './container-engine.js'
import type { ReconcilerState } from './state.js'

export interface NodeRecord {
  id: string
  name: string
  role: 'leader'
  address: string
  status: 'ready' | 'engine-unavailable'
  services: number
  runtime?: EngineInfo
  error?: string
}

export interface ClusterInfo {
  /** `name` is [cluster].name, when set. */
  cluster: { instance: string, name?: string }
  nodes: NodeRecord[]
}

export async function clusterInfo (state: ReconcilerState, node: { name: string, address: URL, instance: string, cluster: string, runtime: ContainerEngine }): Promise<ClusterInfo> {
  const record: NodeRecord = {
    id: await state.nodeId(),
    name: node.name,
    role: 'leader',
    address: node.address.href.replace(/\/$/, ''),
    status: 'ready',
    services: state.services().length
  }
  try {
    record.runtime = await node.runtime.info()
  } catch (err) {
    record.status = 'engine-unavailable'
    record.error = err instanceof Error ? err.message : String(err)
  }
  return { cluster: { instance: node.instance, ...(node.cluster !== '' ? { name: node.cluster } : {}) }, nodes: [record] }
}
