// The webhooks plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const WEBHOOKS_CODES = errorCodes({
  BAD_SIGNATURE: { code: 'BERTH_BAD_SIGNATURE', status: 401, meaning: 'a push without a valid signature (or GitLab token)' },
  NO_SUCH_WEBHOOK: { code: 'BERTH_NO_SUCH_WEBHOOK', status: 404, meaning: 'no webhook with that id, or none registered for the push\'s repository and branch' }
})
