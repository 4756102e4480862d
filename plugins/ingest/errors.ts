// The telemetry server's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const INGEST_CODES = errorCodes({
  INGEST_STORAGE_UNAVAILABLE: { code: 'BERTH_INGEST_STORAGE_UNAVAILABLE', status: 503, meaning: 'the telemetry\'s PostgreSQL database cannot be reached' }
})
