// The reconciler's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const RECONCILER_CODES = errorCodes({
  INVALID_SPEC: { code: 'BERTH_INVALID_SPEC', status: 400, meaning: 'a service declaration (a service.toml or a deploy body) cannot be used' },
  SPEC_REFUSED: { code: 'BERTH_SPEC_REFUSED', status: 403, meaning: 'admission refused a spec: a host path, host port, build source or secret it may not take' },
  NO_SUCH_SERVICE: { code: 'BERTH_NO_SUCH_SERVICE', status: 404, meaning: 'no service (or project) of that name is declared or deployed' },
  NO_SUCH_JOB: { code: 'BERTH_NO_SUCH_JOB', status: 404, meaning: 'no scheduled job of that name in that deployed service' },
  NOT_LEADER: { code: 'BERTH_NOT_LEADER', status: 409, meaning: 'this node is an agent: change services through the leader it names' },
  RELOAD_UNDERWAY: { code: 'BERTH_RELOAD_UNDERWAY', status: 409, meaning: 'a reload is already running' },
  CANARY_RUNNING: { code: 'BERTH_CANARY_RUNNING', status: 409, meaning: 'a canary of the service runs: promote it or roll it back first' },
  NO_CANARY: { code: 'BERTH_NO_CANARY', status: 409, meaning: 'promote asked of a service without a canary' },
  NO_EARLIER_VERSION: { code: 'BERTH_NO_EARLIER_VERSION', status: 409, meaning: 'rollback asked with no earlier version in the deploy history' },
  NO_CONTAINERS: { code: 'BERTH_NO_CONTAINERS', status: 409, meaning: 'the service has no (running) container for what was asked' },
  NAME_TAKEN: { code: 'BERTH_NAME_TAKEN', status: 409, meaning: 'a token limited to projects deployed a service whose name a service of another project holds' },
  ENGINE_FAILED: { code: 'BERTH_ENGINE_FAILED', status: 502, meaning: 'the container engine refused a call' },
  ENGINE_UNAVAILABLE: { code: 'BERTH_ENGINE_UNAVAILABLE', status: 503, meaning: 'the container engine does not answer' },
  NODE_UNAVAILABLE: { code: 'BERTH_NODE_UNAVAILABLE', status: 503, meaning: 'the node the service is placed on is offline or unhealthy' }
})
