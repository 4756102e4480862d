// The backup plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const BACKUP_CODES = errorCodes({
  BACKUP_TARGET: { code: 'BERTH_BACKUP_TARGET', status: 502, meaning: 'a backup target failed or gave back damaged data' }
})
