// The cluster plugin's error codes (masters on etcd), with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const CLUSTER_CODES = errorCodes({
  SHARED_TRANSACTION_TOO_LARGE: { code: 'BERTH_SHARED_TRANSACTION_TOO_LARGE', status: 500, meaning: 'one change would write more than etcd\'s 128 keys at once' },
  SHARED_STATE_UNAVAILABLE: { code: 'BERTH_SHARED_STATE_UNAVAILABLE', status: 503, meaning: 'etcd did not commit a write in time (unreachable, or no quorum)' },
  NO_LEADER: { code: 'BERTH_NO_LEADER', status: 503, meaning: 'no master leads (an election), or the leader cannot be reached' },
  LEADERSHIP_LOST: { code: 'BERTH_LEADERSHIP_LOST', status: 503, meaning: 'a write on the leader\'s authority from a master that does not lead, or whose term ended' }
})
