// The campaign app's error codes, with their status and meaning (listed in docs/api.md).
import { errorCodes } from '../../kernel/index.js'

export const CAMPAIGN_CODES = errorCodes({
  UNKNOWN_MERGE_FIELD: { code: 'BERTH_UNKNOWN_MERGE_FIELD', status: 400, meaning: 'a message\'s subject or body holds an unknown merge field; nothing was sent' },
  CROSS_ORIGIN: { code: 'BERTH_CROSS_ORIGIN', status: 403, meaning: 'a call from a page of another origin' },
  NO_SUCH_FUNCTION: { code: 'BERTH_NO_SUCH_FUNCTION', status: 404, meaning: 'no server function of that name' },
  DONATION_OVER_LIMIT: { code: 'BERTH_DONATION_OVER_LIMIT', status: 409, meaning: 'a donation (or correction) would take the donor over the per-election limit' },
  ITEMIZATION_REQUIRED: { code: 'BERTH_ITEMIZATION_REQUIRED', status: 409, meaning: 'the donor\'s gifts pass the itemisation threshold without address, occupation and employer' },
  REFUND_EXCEEDS_GIFT: { code: 'BERTH_REFUND_EXCEEDS_GIFT', status: 409, meaning: 'a refund or correction beyond what of the donation is not yet refunded' },
  EMAIL_TAKEN: { code: 'BERTH_EMAIL_TAKEN', status: 409, meaning: 'another volunteer has that e-mail address' },
  DUPLICATE_PERSON: { code: 'BERTH_DUPLICATE_PERSON', status: 409, meaning: 'another person has that e-mail address or phone number' },
  SHIFT_OVERLAP: { code: 'BERTH_SHIFT_OVERLAP', status: 409, meaning: 'an RSVP for a shift overlapping one the person is confirmed on' },
  SHIFT_CLOSED: { code: 'BERTH_SHIFT_CLOSED', status: 409, meaning: 'an RSVP for a shift that has started or is cancelled' },
  NOT_CONFIRMED: { code: 'BERTH_NOT_CONFIRMED', status: 409, meaning: 'a check-in of someone not confirmed on the shift' },
  SENDING_OFF: { code: 'BERTH_SENDING_OFF', status: 503, meaning: 'e-mail or SMS sending without its provider configured; nothing was sent' },
  SESSION_STORE_UNAVAILABLE: { code: 'BERTH_SESSION_STORE_UNAVAILABLE', status: 503, meaning: 'sessions are in Redis and Redis does not answer' },
  DATABASE_UNAVAILABLE: { code: 'BERTH_DATABASE_UNAVAILABLE', status: 503, meaning: 'the modules\' data is in PostgreSQL and it cannot be reached' },
  GENERATOR_UNAVAILABLE: { code: 'BERTH_GENERATOR_UNAVAILABLE', status: 503, meaning: 'the generative provider did not answer, is busy, or answered badly (with fallback off)' },
  IDP_UNAVAILABLE: { code: 'BERTH_IDP_UNAVAILABLE', status: 503, meaning: 'the identity provider cannot be reached' }
})
