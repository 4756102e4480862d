// The databases plugin's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const DATABASES_CODES = errorCodes({
  DB_DEPLOY: { code: 'BERTH_DB_DEPLOY', status: 502, meaning: 'db create could not deploy the database (everything it made is rolled back)' }
})
