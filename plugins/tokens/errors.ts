// The tokens plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const TOKENS_CODES = errorCodes({
  TOKEN_INVALID: { code: 'BERTH_TOKEN_INVALID', status: 401, meaning: 'the bearer token is unknown, revoked or altered' },
  PROJECT_SCOPE: { code: 'BERTH_PROJECT_SCOPE', status: 403, meaning: 'a token limited to projects asked for another project\'s service, or for what acts on every project' },
  NO_SUCH_TOKEN: { code: 'BERTH_NO_SUCH_TOKEN', status: 404, meaning: 'no token with that id' },
  ADMIN_TOKEN_FIXED: { code: 'BERTH_ADMIN_TOKEN_FIXED', status: 409, meaning: 'the bootstrap admin token cannot be revoked through the API' }
})
