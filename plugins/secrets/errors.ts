// The secrets plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const SECRETS_CODES = errorCodes({
  NO_SUCH_SECRET: { code: 'BERTH_NO_SUCH_SECRET', status: 404, meaning: 'no secret of that name (in that project)' }
})
