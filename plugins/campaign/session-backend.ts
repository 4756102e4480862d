// Where the app keeps sessions and pending logins: this process's memory (the default: one instance),
// or Redis when [campaign].redis_url is set (several instances behind any load balancer, no sticky
// sessions). Either way the same contracts (sessions.ts, pending-logins.ts) and one SessionAuth.
import type { Redis } from 'ioredis'
import type { PluginContext } from '../../kernel/index.js'
import { MemoryPendingLogins, type PendingLoginStore } from './pending-logins.js'
import { SessionAuth } from './session-auth.js'
import { SessionCookie } from './session-cookie.js'
import { MemorySessions, type SessionStore } from './sessions.js'
import type { CampaignConfig } from './settings.js'

/** How often the health report asks whether Redis answers. */
const REDIS_CHECK_MS = 10_000
const REDIS_SETTING = '[campaign].redis_url (CAMPAIGN_REDIS_URL)'

export interface SessionBackend {
  kind: 'memory' | 'redis'
  sessions: SessionStore
  pending: PendingLoginStore
  auth: SessionAuth
  /** Drop what has expired (memory only: Redis expires keys itself); run every minute. */
  sweep(): void
  close(): Promise<void>
}

export async function sessionBackend (ctx: PluginContext<CampaignConfig>): Promise<SessionBackend> {
  const config = ctx.config
  const secure = config.app_url.startsWith('https:')
  const idleMs = config.session_idle_hours * 3_600_000
  const loginTtlMs = config.login_timeout_seconds * 1000
  if (config.redis_url === '') {
    const sessions = new MemorySessions({ idleMs, maxSessions: config.max_sessions })
    const pending = new MemoryPendingLogins({ ttlMs: loginTtlMs, maxEntries: config.max_pending_logins })
    return {
      kind: 'memory',
      sessions,
      pending,
      auth: new SessionAuth({ sessions, cookie: new SessionCookie({ secure }) }),
      sweep: () => { sessions.sweep(); pending.sweep() },
      close: async () => {}
    }
  }
  const { connectRedis, RedisPendingLogins, RedisSessions, SharedCookieKey } = await import('./redis-sessions.js')
  const redis = await connectRedis(config.redis_url, REDIS_SETTING)
  const key = new SharedCookieKey(redis, config.redis_prefix)
  await key.refresh()
  const cookie = new SessionCookie({ secure, key: key.key })
  const sessions = new RedisSessions(redis, { prefix: config.redis_prefix, idleMs })
  ctx.schedule.every('session-store-check', REDIS_CHECK_MS, async () => { ctx.check('session-store', await redisCheck(redis)) })
  ctx.check('session-store', { status: 'ok', reason: 'Redis answers' })
  return {
    kind: 'redis',
    sessions,
    pending: new RedisPendingLogins(redis, { prefix: config.redis_prefix, ttlMs: loginTtlMs }),
    auth: new SessionAuth({
      sessions,
      cookie,
      refreshKey: async () => {
        const changed = await key.refresh()
        if (changed) cookie.rekey(key.key)
        return changed
      }
    }),
    sweep: () => {},
    close: async () => { await redis.quit().catch(() => { redis.disconnect() }) }
  }
}

async function redisCheck (redis: Redis): Promise<{ status: 'ok' | 'down', reason: string }> {
  try {
    await redis.ping()
    return { status: 'ok', reason: 'Redis answers' }
  } catch (err) {
    return { status: 'down', reason: `Redis does not answer (${(err as Error).message}): nobody can sign in and signed-in users get 503 until it is back` }
  }
}
