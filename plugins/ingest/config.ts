// The [ingest] section: where the telemetry is kept, device key, storage limits, retention, alerting, CORS, rate limits, users, SSO.
import type { Static } from '@sinclair/typebox'
import type { SectionSchema } from '../../kernel/index.js'

const MIB = 1024 * 1024

export const ROLES = ['admin', 'provisioner', 'viewer'] as const
export type Role = typeof ROLES[number]

export const ingestSection = ((Type) => Type.Object({
  database_url: Type.String({ default: '', description: 'PostgreSQL URL (postgres://user:password@host:5432/database) where the telemetry is kept, shared by every ingest node; empty: the embedded LMDB store of the state directory.' }),
  api_key: Type.String({ default: '', description: 'Key devices send as X-API-Key. Empty: one is generated on first start into <state_dir>/ingest-api-key (0600).' }),
  auto_register: Type.Boolean({ default: true, description: 'Create unknown devices from their first chunk; when false such chunks are rejected until the device is registered.' }),
  max_body_bytes: Type.Integer({ minimum: 26, default: MIB, description: 'Largest POST /ingest/chunks body (413 beyond).' }),
  elf_dir: Type.String({ default: '', description: 'Directory for uploaded ELF files; empty means <state_dir>/elf.' }),
  elf_max_bytes: Type.Integer({ minimum: 64, default: 64 * MIB, description: 'Largest ELF upload (413 beyond).' }),
  ota_image_max_bytes: Type.Integer({ minimum: 64, default: 32 * MIB, description: 'Largest firmware image upload (413 beyond).' }),
  ota_public_key: Type.String({ default: '', description: 'The fleet\'s Ed25519 public key (from `berth ota keygen`): 64 hex characters, or the path of a file holding them or a PEM key. Set: firmware images are refused unless signed by it (docs/firmware-updates.md). Empty: images are not checked.' }),
  alert_check_seconds: Type.Integer({ minimum: 1, default: 60, description: 'How often metric and crash-rate alert rules are evaluated (on one node of those sharing a database).' }),
  ota_check_seconds: Type.Integer({ minimum: 1, default: 60, description: 'How often OTA releases are advanced on their schedule and checked for a crash rate that halts them (on one node of those sharing a database).' }),
  retention_days: Type.Integer({ minimum: 1, default: 90, description: 'Faults, metrics, reboots, traces and heartbeats older than this are deleted (at start, then hourly).' }),
  offline_after_seconds: Type.Integer({ minimum: 1, default: 3600, description: 'A device not seen for this long is offline (checked every offline_check_seconds).' }),
  offline_check_seconds: Type.Integer({ minimum: 1, default: 60, description: 'How often the offline check runs (on one node of those sharing a database).' }),
  alert_webhooks: Type.Array(Type.String({ format: 'uri' }), { default: [], description: 'URLs that receive alert events as JSON POSTs (retried with backoff).' }),
  cors_origin: Type.String({ default: '*', description: 'Access-Control-Allow-Origin value for the telemetry API.' }),
  metrics_public: Type.Boolean({ default: false, description: 'Serve /metrics/prometheus without authentication (for scrapers).' }),
  rate_limit: Type.Object({
    enabled: Type.Boolean({ default: false, description: 'Token buckets on /auth paths (per client address) and /ingest paths (per device whose frames a body carries; per client address otherwise).' }),
    burst: Type.Integer({ minimum: 1, default: 60, description: 'Bucket size: requests allowed at once.' }),
    per_second: Type.Number({ exclusiveMinimum: 0, default: 10, description: 'Tokens added per second.' }),
    trusted_proxies: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Addresses or CIDR blocks of reverse proxies whose X-Forwarded-For names the client, for the rate limits and the Basic sign-in budget. Empty: the socket address is the client.' })
  }, { additionalProperties: false, default: {} }),
  auth_failures: Type.Object({
    burst: Type.Integer({ minimum: 1, default: 10, description: 'Basic password checks a client address may make at once; each success gives its check back.' }),
    per_second: Type.Number({ exclusiveMinimum: 0, default: 0.2, description: 'Checks given back to a client address per second (one every 5 s).' })
  }, { additionalProperties: false, default: {} }),
  fragments: Type.Object({
    max_chunks: Type.Integer({ minimum: 1, default: 1024, description: 'Chunks that may be incomplete at once.' }),
    max_bytes: Type.Integer({ minimum: 1, default: 8 * MIB, description: 'Fragment bytes held at once.' }),
    ttl_seconds: Type.Integer({ minimum: 1, default: 3600, description: 'Incomplete chunks older than this are dropped; a later fragment of one is refused with retry, so that its device sends the whole chunk again.' })
  }, { additionalProperties: false, default: {} }),
  users: Type.Array(Type.Object({
    name: Type.String({ minLength: 1 }),
    password: Type.String({ pattern: '^scrypt\\$', description: 'Hash from `berth telemetry hash-password`.' }),
    role: Type.Union(ROLES.map(r => Type.Literal(r)))
  }, { additionalProperties: false }), { default: [], description: 'Basic-auth users. Empty: an admin password is generated into <state_dir>/telemetry-admin-password (0600).' }),
  sso: Type.Object({
    idp_url: Type.String({ default: '', description: 'Identity provider base URL (IDP_URL).' }),
    realm: Type.String({ default: '', description: 'Realm (IDP_REALM).' }),
    client_id: Type.String({ default: '', description: 'Public client id of the dashboard (IDP_CLIENT_ID); bearer tokens must be issued for it (azp, or client_id, or aud naming it).' }),
    dev_idp: Type.Boolean({ default: false, description: 'Development only: run an embedded identity provider on 127.0.0.1 with one user per fleet role (their passwords logged at start) and sign in through it; refused with idp_url set.' }),
    dev_idp_port: Type.Integer({ minimum: 0, maximum: 65535, default: 0, description: 'Port of the embedded development identity provider; 0 picks a free one.' })
  }, { additionalProperties: false, default: {} })
}, { additionalProperties: false })) satisfies SectionSchema

export type IngestSettings = Static<ReturnType<typeof ingestSection>>

export const INGEST_ENV = {
  INGEST_API_KEY: 'api_key',
  INGEST_DATABASE_URL: 'database_url',
  INGEST_AUTO_REGISTER: 'auto_register',
  ELF_DIR: 'elf_dir',
  RETENTION_DAYS: 'retention_days',
  CORS_ORIGIN: 'cors_origin',
  IDP_URL: 'sso.idp_url',
  IDP_REALM: 'sso.realm',
  IDP_CLIENT_ID: 'sso.client_id'
}

/** SSO mode needs all three identity-provider settings. */
export function ssoEnabled (settings: IngestSettings): boolean {
  return settings.sso.idp_url !== '' && settings.sso.realm !== '' && settings.sso.client_id !== ''
}
