// The [campaign] config section (with its environment variables) and the checks made at start-up:
// production refuses the development fallback and the embedded IDP; an http IDP must be on loopback.
import type { Static } from '@sinclair/typebox'
import { developmentOnly, StartupError, type SectionSchema } from '../../kernel/index.js'

export const campaignSection = ((Type) => Type.Object({
  idp_url: Type.String({ default: '', description: 'Base URL of the OpenID provider (Keycloak style, before /realms/...); empty: nobody can sign in, unless dev_idp is on.' }),
  idp_realm: Type.String({ default: 'campaign', pattern: '^[A-Za-z0-9_-]+$', description: 'Realm: the issuer is {idp_url}/realms/{idp_realm}.' }),
  idp_client_id: Type.String({ default: 'campaign-app', minLength: 1, description: 'Client id of this application at the IDP (public client with PKCE, no secret).' }),
  app_url: Type.String({ default: '', description: 'Public base URL of the application (login callback, post-logout address); empty: the app listener\'s address.' }),
  dev_fallback: Type.Boolean({ default: false, description: 'Development only: check-auth reports a fixed admin when nobody is signed in.' }),
  dev_idp: Type.Boolean({ default: false, description: 'Development only: run an embedded identity provider on 127.0.0.1 with one user per role (passwords in <state_dir>/campaign-dev-idp-passwords) and sign in through it; refused with idp_url set, and when NODE_ENV=production.' }),
  dev_idp_port: Type.Integer({ minimum: 0, maximum: 65535, default: 0, description: 'Port of the embedded development IDP on 127.0.0.1; 0 picks a free one.' }),
  session_idle_hours: Type.Number({ exclusiveMinimum: 0, default: 24, description: 'A session ends after this many hours without a request.' }),
  max_sessions: Type.Integer({ minimum: 1, default: 10000, description: 'Most sessions kept in memory; the least recently used gives way (with redis_url, Redis\'s own maxmemory bounds them).' }),
  login_timeout_seconds: Type.Integer({ minimum: 1, default: 600, description: 'How long a started login may take to come back from the IDP.' }),
  max_pending_logins: Type.Integer({ minimum: 1, default: 1000, description: 'Most logins waiting for the IDP at once; the oldest gives way.' }),
  max_request_bytes: Type.Integer({ minimum: 64, default: 262144, description: 'Largest server-function request body in bytes (413 beyond).' }),
  contribution_limit_cents: Type.Integer({ minimum: 1, default: 350000, description: 'Most one donor may give toward one election (a primary, a general), in cents.' }),
  election_cycles: Type.Array(Type.Object({
    name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.]{0,31}$', description: 'The cycle\'s name, e.g. 2026; elections are named <name>-primary and <name>-general.' }),
    primary: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Day of the primary election (YYYY-MM-DD); without one, the cycle has only its general.' })),
    general: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Day of the general election (YYYY-MM-DD).' })
  }, { additionalProperties: false }), { default: [], description: 'Election cycles for the contribution limits; empty: the United States federal cycles (a general election on the Tuesday after the first Monday of November of each even year, no primary).' }),
  generator_url: Type.String({ default: '', description: 'Base URL of an OpenAI-compatible chat API up to /v1 (Ollama: http://127.0.0.1:11434/v1); empty: the local engine only.' }),
  generator_model: Type.String({ default: '', description: 'Model name sent to the generative provider (required with generator_url).' }),
  generator_api_key: Type.String({ default: '', description: 'Bearer key of the provider, normally ${secrets.NAME} (needs the secrets plugin); empty sends none.' }),
  generator_timeout_seconds: Type.Number({ exclusiveMinimum: 0, default: 60, description: 'Longest wait for one answer of the generative provider, its wait for a free slot included.' }),
  generator_fallback: Type.Boolean({ default: true, description: 'When the generative provider fails or times out, answer from the local engine with a fallback_note; false: answer 503.' }),
  generator_concurrency: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'Most requests to the generative provider at once; a short queue waits behind them.' }),
  smtp_url: Type.String({ default: '', description: 'SMTP server the sending module sends e-mail through: smtp://user:password@host:587 (STARTTLS when offered) or smtps://user:password@host:465; empty: e-mail sending is off (send-email answers 503).' }),
  mail_from: Type.String({ default: '', maxLength: 320, description: 'The From of the e-mails sent, e.g. "Lopez for Council <hello@lopez.example>" (required with smtp_url).' }),
  sms_url: Type.String({ default: '', description: 'The SMS provider\'s endpoint: each message is POSTed to it as JSON {to, body} with Authorization: Bearer <sms_token>; a 2xx answer is delivered. Plain http only on loopback; empty: SMS sending is off (send-sms answers 503).' }),
  sms_token: Type.String({ default: '', description: 'Bearer token for the SMS provider, normally ${secrets.NAME}; never logged or shown. Empty sends no Authorization header.' }),
  sms_inbound_auth_token: Type.String({ default: '', description: 'The auth token of the SMS provider account (Twilio\'s Auth Token) that signs the replies it posts to /sms/inbound (X-Twilio-Signature), normally ${secrets.NAME}; never logged or shown. Empty: replies are not received (/sms/inbound answers 404) and generated SMS copy promises no STOP.' }),
  sms_inbound_url: Type.String({ default: '', description: 'The public URL of /sms/inbound exactly as configured at the SMS provider (its signature covers it; behind a proxy the URL requests arrive with differs); empty: {app_url}/sms/inbound.' }),
  sms_help_text: Type.String({ default: 'Reply STOP to stop receiving our texts, START to receive them again.', minLength: 1, maxLength: 1600, description: 'The answer to a reply of HELP or INFO: name the campaign and how to reach it.' }),
  database_url: Type.String({ default: '', description: 'PostgreSQL URL (postgres://user:password@host:5432/database) where the modules keep their data (schema campaign), shared by every instance of the app; empty: the embedded LMDB store of the state directory.' }),
  redis_url: Type.String({ default: '', description: 'Redis URL (redis://[user:password@]host:6379[/db], or rediss://) where sessions and pending logins are kept, shared by every instance of the app; empty: in this process\'s memory.' }),
  redis_prefix: Type.String({ default: 'berth:campaign:', minLength: 1, maxLength: 64, description: 'Prefix of the keys the app writes in Redis (one per application sharing a Redis).' }),
  max_posts: Type.Integer({ minimum: 100, default: 200000, description: 'Most social posts kept by the sentiment monitor; the oldest give way.' }),
  shift_reminder_hours: Type.Number({ exclusiveMinimum: 0, maximum: 720, default: 24, description: 'How many hours before a shift starts each confirmed person gets its reminder (once; a check every 5 minutes).' }),
  public_rsvp_per_minute: Type.Integer({ minimum: 1, maximum: 10000, default: 10, description: 'Most posts one client address may make to the public pages in a minute, all together (RSVPs, cancel links, forms and petitions, consent links; 429 beyond); counted per instance.' }),
  public_form_min_seconds: Type.Number({ minimum: 0, maximum: 600, default: 2, description: 'How long after a public event page was served its RSVP form may be sent (sooner is refused as a script, and may be sent again).' }),
  public_form_max_minutes: Type.Number({ exclusiveMinimum: 0, maximum: 1440, default: 120, description: 'How long a public event page\'s RSVP form stays valid after it was served.' }),
  public_embed_hosts: Type.Array(Type.String({ pattern: '^https?://(\\*\\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?$', maxLength: 200 }), { maxItems: 50, default: [], description: 'Sites that may show the public forms in a frame (GET /f/{slug}/embed), each as scheme and host with an optional port, e.g. https://www.example.org; written into the embed page\'s frame-ancestors. Empty: no site may.' }),
  max_records: Type.Integer({ minimum: 100, default: 50000, description: 'Most records each analysis module keeps (articles, calls, commitments…); the oldest give way.' })
}, { additionalProperties: false })) satisfies SectionSchema

export type CampaignConfig = Static<ReturnType<typeof campaignSection>>

/** The campaign's own names: the telemetry server reads IDP_URL, IDP_REALM and IDP_CLIENT_ID. */
export const CAMPAIGN_ENV = {
  CAMPAIGN_IDP_URL: 'idp_url',
  CAMPAIGN_IDP_REALM: 'idp_realm',
  CAMPAIGN_IDP_CLIENT_ID: 'idp_client_id',
  APP_URL: 'app_url',
  CAMPAIGN_DEV_FALLBACK: 'dev_fallback',
  CAMPAIGN_DEV_IDP: 'dev_idp',
  CAMPAIGN_GENERATOR_URL: 'generator_url',
  CAMPAIGN_GENERATOR_MODEL: 'generator_model',
  CAMPAIGN_GENERATOR_API_KEY: 'generator_api_key',
  CAMPAIGN_GENERATOR_FALLBACK: 'generator_fallback',
  CAMPAIGN_REDIS_URL: 'redis_url',
  CAMPAIGN_DATABASE_URL: 'database_url',
  CAMPAIGN_SMTP_URL: 'smtp_url',
  CAMPAIGN_MAIL_FROM: 'mail_from',
  CAMPAIGN_SMS_URL: 'sms_url',
  CAMPAIGN_SMS_TOKEN: 'sms_token',
  CAMPAIGN_SMS_INBOUND_AUTH_TOKEN: 'sms_inbound_auth_token',
  CAMPAIGN_SMS_INBOUND_URL: 'sms_inbound_url'
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/

/** The embedded development IDP's setting, with its variable and the flag of `berth server` that sets it. */
export const DEV_IDP_SETTING = '[campaign].dev_idp (CAMPAIGN_DEV_IDP, berth server --dev)'

/** Whether anybody can sign in: an identity provider is configured, or the development one asked for. */
export function signInConfigured (config: CampaignConfig): boolean {
  return config.idp_url !== '' || config.dev_idp
}

/** Refuse configurations that must not run; the message names the key and its variable. */
export function checkSettings (config: CampaignConfig, production: boolean): void {
  if (config.app_url !== '') httpUrl(config.app_url, '[campaign].app_url (APP_URL)')
  if (config.dev_fallback) developmentOnly(production, '[campaign].dev_fallback (CAMPAIGN_DEV_FALLBACK)')
  if (config.dev_idp) developmentOnly(production, DEV_IDP_SETTING)
  if (config.generator_url !== '') {
    httpUrl(config.generator_url, '[campaign].generator_url (CAMPAIGN_GENERATOR_URL)')
    if (config.generator_model === '') throw new StartupError('[campaign].generator_model (CAMPAIGN_GENERATOR_MODEL) must name a model when generator_url is set')
  }
  checkSendingSettings(config)
  if (config.idp_url === '') return
  if (config.dev_idp) throw new StartupError(`${DEV_IDP_SETTING} runs its own identity provider; leave [campaign].idp_url (CAMPAIGN_IDP_URL) empty, or turn dev_idp off`)
  const idp = httpUrl(config.idp_url, '[campaign].idp_url (CAMPAIGN_IDP_URL)')
  if (idp.protocol === 'http:' && !LOOPBACK.test(idp.hostname)) {
    throw new StartupError(`[campaign].idp_url (CAMPAIGN_IDP_URL) must use https unless the provider is on loopback; got ${config.idp_url}`)
  }
}

/** The sending module's settings: an smtp(s) URL with a From address, an SMS endpoint that is https unless on loopback, a reply webhook URL only with the token that checks its signatures. */
function checkSendingSettings (config: CampaignConfig): void {
  if (config.smtp_url !== '') {
    const key = '[campaign].smtp_url (CAMPAIGN_SMTP_URL)'
    let url: URL | undefined
    try {
      url = new URL(config.smtp_url)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') throw new StartupError(`${key} must be an smtp:// or smtps:// URL naming a host`)
    if (config.mail_from.trim() === '') throw new StartupError('[campaign].mail_from (CAMPAIGN_MAIL_FROM) must give the From address of the e-mails when smtp_url is set')
  }
  if (config.sms_url !== '') {
    const sms = httpUrl(config.sms_url, '[campaign].sms_url (CAMPAIGN_SMS_URL)')
    if (sms.protocol === 'http:' && !LOOPBACK.test(sms.hostname)) throw new StartupError(`[campaign].sms_url (CAMPAIGN_SMS_URL) must use https unless the provider is on loopback; got ${sms.origin}`)
  }
  if (config.sms_inbound_url !== '') {
    httpUrl(config.sms_inbound_url, '[campaign].sms_inbound_url (CAMPAIGN_SMS_INBOUND_URL)')
    if (config.sms_inbound_auth_token === '') throw new StartupError('[campaign].sms_inbound_url (CAMPAIGN_SMS_INBOUND_URL) is set but sms_inbound_auth_token (CAMPAIGN_SMS_INBOUND_AUTH_TOKEN) is empty: replies cannot be checked without the provider\'s auth token')
  }
}

function httpUrl (text: string, key: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new StartupError(`${key} must be an http(s) URL; got ${JSON.stringify(text)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new StartupError(`${key} must be an http(s) URL; got ${JSON.stringify(text)}`)
  return url
}

/** Whether a host talks to this process over loopback (plain HTTP is then accepted). */
export function isLoopback (url: URL): boolean {
  return LOOPBACK.test(url.hostname)
}
