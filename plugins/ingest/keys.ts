// The database keys the telemetry API makes from what a client sends — device ids, group names, OTA
// target ids, list cursors — and their limits, checked before anything is read or written (LMDB refuses
// keys over 1,978 bytes; these stay far below). Documented in docs/api.md.
import { Type } from '../../kernel/schema.js'

/** 8 bytes as 16 lowercase hex characters, as in the frame header. */
export const DEVICE_ID = /^[0-9a-f]{16}$/
/** 1–64 characters: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** A UUID, as the server makes them. */
export const OTA_TARGET_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** The longest cursor of a device's series a client may send back (those issued are under 100). */
export const MAX_SERIES_CURSOR = 256

/** A string of `pattern`, whose length limit is checked first (so a long one is refused as too long). */
const keyString = (pattern: RegExp, minLength: number, maxLength: number, description: string): ReturnType<typeof Type.String> =>
  Type.String({ minLength, maxLength, pattern: pattern.source, description })

export const DeviceId = keyString(DEVICE_ID, 16, 16, '8 bytes as 16 lowercase hex characters, as in the frame header.')
export const GroupName = keyString(GROUP_NAME, 1, 64, '1–64 letters, digits, ".", "_" or "-", starting with a letter or digit.')
export const OtaTargetId = keyString(OTA_TARGET_ID, 36, 36, 'The id the server gave the target (a UUID).')
