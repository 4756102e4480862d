// The nodes plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const NODES_CODES = errorCodes({
  NO_SUCH_NODE: { code: 'BERTH_NO_SUCH_NODE', status: 404, meaning: 'no node with that id or name' },
  NODE_NAME_TAKEN: { code: 'BERTH_NODE_NAME_TAKEN', status: 409, meaning: 'a joining node\'s name belongs to another node' },
  NODE_NOT_OFFLINE: { code: 'BERTH_NODE_NOT_OFFLINE', status: 409, meaning: 'only an offline node (never the leader) can be forgotten' },
  DRAIN_WOULD_STRAND: { code: 'BERTH_DRAIN_WOULD_STRAND', status: 409, meaning: 'draining would stop replicas no other node can take' }
})
