// The login routes, open to everyone: GET /auth starts a login (PKCE + state) at the provider,
// GET /auth/callback completes it and starts a session, GET /logout ends it at both ends. Without an
// identity provider configured, /auth and /auth/callback answer a 503 page saying so.
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { BerthError, messageOf } from '../../kernel/index.js'
import { CAMPAIGN_CODES } from './errors.js'
import { messagePage } from './html.js'
import { localPath } from './local-path.js'
import { newLoginSecrets } from './login-secrets.js'
import { LoginRefused, type IdpClient } from './oidc-client.js'
import type { PendingLoginStore } from './pending-logins.js'
import type { SessionAuth } from './session-auth.js'
import type { SessionRecord } from './sessions.js'

export interface AuthRoutesOptions {
  pending: PendingLoginStore
  auth: SessionAuth
  log: Logger
  /** The provider client and the app's base URL, known once the plugin has started; undefined when no provider is configured. */
  login(): { idp: IdpClient, appUrl: URL } | undefined
  /** What the operator can do about `login()` being undefined, for the page saying that nobody can sign in. */
  remedy: string
  /** Called after each successful login. */
  onLogin(record: SessionRecord): Promise<void>
}

export function authRoutes ({ pending, auth, log, login, remedy, onLogin }: AuthRoutesOptions): FastifyPluginAsync {
  const open = { config: { access: 'open' as const } }
  const notConfigured = async (reply: FastifyReply): Promise<FastifyReply> =>
    await page(reply, 503, 'Sign-in is not configured', `This application has no identity provider, so nobody can sign in yet. The operator can ${remedy}.`)
  return async app => {
    app.get<{ Querystring: { redirect_url?: string } }>('/auth', open, async (request, reply) => {
      const redirectPath = localPath(request.query.redirect_url ?? '/')
      if (redirectPath === undefined) return await page(reply, 400, 'Sign-in refused', 'redirect_url must be a path on this application.')
      const provider = login()
      if (provider === undefined) return await notConfigured(reply)
      const secrets = await newLoginSecrets()
      const { idp } = provider
      const target = await idp.authorizationUrl(secrets)
      await pending.add(secrets.state, { codeVerifier: secrets.codeVerifier, redirectPath })
      return await reply.redirect(target.href, 302)
    })

    app.get<{ Querystring: Record<string, string | undefined> }>('/auth/callback', open, async (request, reply) => {
      const { state, error } = request.query
      const provider = login()
      if (provider === undefined) return await notConfigured(reply)
      if (error !== undefined) return await page(reply, 400, 'Sign-in not completed', `The identity provider answered: ${error}.`)
      const entry = state === undefined ? undefined : await pending.take(state)
      if (state === undefined || entry === undefined) {
        return await page(reply, 400, 'Sign-in link not valid', 'This sign-in is unknown, has expired or was already used. Please sign in again.')
      }
      const { idp, appUrl } = provider
      let record: SessionRecord
      try {
        record = await idp.completeLogin(new URL(request.url, appUrl), state, entry.codeVerifier)
      } catch (err) {
        if (err instanceof LoginRefused) return await page(reply, 400, 'Sign-in refused', `The identity provider refused the sign-in (${err.message}).`)
        log.warn({ err: messageOf(err) }, 'sign-in failed')
        return await page(reply, 502, 'Sign-in failed', 'The identity provider could not complete the sign-in. Please try again.')
      }
      await onLogin(record)
      return await reply.header('set-cookie', await auth.start(request, record)).redirect(entry.redirectPath, 302)
    })

    app.get('/logout', open, async (request, reply) => {
      const idToken = (await auth.current(request))?.id_token
      reply.header('set-cookie', await auth.end(request))
      const provider = login()
      if (provider === undefined) return await reply.redirect('/', 302)
      const target = await provider.idp.logoutUrl(idToken).catch(() => provider.appUrl)
      return await reply.redirect(target.href, 302)
    })

    app.setErrorHandler(async (error, request, reply) => {
      const status = error instanceof BerthError ? error.statusCode : 500
      if (status >= 500) log.error({ err: error, path: request.url.split('?')[0] }, 'login route failed')
      await page(reply, status, 'Sign-in unavailable', status !== 503
        ? 'Something went wrong.'
        : error instanceof BerthError && error.code === CAMPAIGN_CODES.SESSION_STORE_UNAVAILABLE.code
          ? 'The session store does not answer. Please try again in a moment.'
          : 'The identity provider cannot be reached. Please try again later.')
    })
  }
}

async function page (reply: FastifyReply, status: number, title: string, message: string): Promise<FastifyReply> {
  return await reply.code(status).type('text/html; charset=utf-8').send(messagePage(title, message))
}
