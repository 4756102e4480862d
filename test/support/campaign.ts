// Signing in to the campaign app without a browser: a cookie jar and a scripted login through the
// development IDP's form (fetch with manual redirects), about half a second per login; call statuses;
// and the app in a test kernel with a staff session, as the module tests use it (on the default backends, or on
// PostgreSQL and Redis when BERTH_TEST_CAMPAIGN_BACKEND=shared).
import { open, type RootDatabase } from 'lmdb'
import type { Kernel } from '../../kernel/index.js'
import { LmdbCampaignStore } from '../../plugins/campaign/store/lmdb-store.js'
import devIdp from '../../plugins/dev-idp/index.js'
import campaign from '../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../plugins/campaign/client.js'
import type { DevUser } from '../../plugins/dev-idp/users.js'
import { testKernel, type TestKernelOptions } from './kernel.js'
import type { ComponentTest } from './component.js'
import { tempDir } from './tmp.js'

interface StoredCookie { value: string, path: string }

/** Cookies by host, as a browser keeps them (domain attributes aside); expired ones are dropped. */
export class CookieJar {
  readonly #byHost = new Map<string, Map<string, StoredCookie>>()

  keep (url: URL, response: Response): void {
    const cookies = this.#byHost.get(url.host) ?? new Map<string, StoredCookie>()
    this.#byHost.set(url.host, cookies)
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map(s => s.trim())
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const value = pair.slice(eq + 1)
      const attr = (key: string): string | undefined => attributes.find(a => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1)
      const expired = attr('max-age') === '0' || (attr('expires') !== undefined && Date.parse(attr('expires') as string) < Date.now())
      if (expired || value === '') cookies.delete(name)
      else cookies.set(name, { value, path: attr('path') ?? '/' })
    }
  }

  /** The Cookie header for `url`. */
  header (url: URL): string {
    return [...(this.#byHost.get(url.host) ?? new Map<string, StoredCookie>())]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ')
  }

  /** Copy the cookies of `url`'s host from another jar (a browser's app cookies with a fresh IDP session). */
  copyHost (from: CookieJar, url: URL): void {
    this.#byHost.set(url.host, new Map(from.#byHost.get(url.host)))
  }
}

/** One request with the jar's cookies and no redirect following; the jar keeps what comes back. */
export async function send (jar: CookieJar, url: string | URL, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url)
  const response = await fetch(target, { ...init, redirect: 'manual', headers: { ...init.headers as Record<string, string>, cookie: jar.header(target) } })
  jar.keep(target, response)
  return response
}

/** Follow redirects from `url` with the jar until a response that is not a redirect, or until `stop` says so. */
export async function followRedirects (jar: CookieJar, url: string | URL, stop: (url: URL) => boolean = () => false): Promise<{ response: Response, url: URL }> {
  let current = new URL(url)
  for (let hops = 0; hops < 20; hops++) {
    if (stop(current)) return { response: new Response(null, { status: 204 }), url: current }
    const response = await send(jar, current)
    const location = response.headers.get('location')
    if (response.status < 300 || response.status >= 400 || location === null) return { response, url: current }
    await response.arrayBuffer()
    current = new URL(location, current)
  }
  throw new Error(`too many redirects from ${String(url)}`)
}

export interface LoginResult {
  jar: CookieJar
  /** The Cookie header to send to the app. */
  cookie: string
  /** Where the app sent the browser after the callback. */
  landed: URL
}

/**
 * From `start`, through the development IDP's sign-in form as `user` (no form while the jar holds a
 * live IDP session), following redirects until `arrived` says so; the URL it stopped at.
 */
export async function signInThroughIdp (jar: CookieJar, start: URL, user: Pick<DevUser, 'username' | 'password'>, arrived: (url: URL) => boolean): Promise<URL> {
  const form = await followRedirects(jar, start, arrived)
  if (arrived(form.url)) return form.url
  if (form.response.status !== 200 || !form.url.pathname.includes('/login/')) {
    throw new Error(`expected the IDP's sign-in form, got ${form.response.status} at ${form.url.href}`)
  }
  await form.response.text()
  const posted = await send(jar, form.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: user.username, password: user.password }).toString()
  })
  const location = posted.headers.get('location')
  if (posted.status !== 303 || location === null) throw new Error(`sign-in form answered ${posted.status}`)
  await posted.arrayBuffer()
  return (await followRedirects(jar, new URL(location, form.url), arrived)).url
}

/**
 * Sign in as `user` through /auth and the development IDP's form, as a browser would. When the jar
 * still holds a live IDP session, the IDP returns at once and no form is shown.
 */
export async function scriptedLogin (appUrl: URL, user: Pick<DevUser, 'username' | 'password'>, redirectPath = '/', jar = new CookieJar()): Promise<LoginResult> {
  // Follow the IDP back to the app; stop before loading the final page.
  const backAtApp = (url: URL): boolean => url.host === appUrl.host && !url.pathname.startsWith('/auth')
  const landed = await signInThroughIdp(jar, new URL(`/auth?redirect_url=${encodeURIComponent(redirectPath)}`, appUrl), user, backAtApp)
  return { jar, cookie: jar.header(appUrl), landed }
}

/** Log out through /logout and the IDP's confirmation form, as a browser would; returns where it ended. */
export async function scriptedLogout (jar: CookieJar, appUrl: URL): Promise<URL> {
  const confirm = await followRedirects(jar, new URL('/logout', appUrl))
  const html = await confirm.response.text()
  const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(html)
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1]
  if (action === null || xsrf === undefined) throw new Error(`expected the IDP's sign-out form at ${confirm.url.href}`)
  const posted = await send(jar, new URL(action[1] ?? action[2], confirm.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, logout: 'yes' }).toString()
  })
  const location = posted.headers.get('location')
  await posted.arrayBuffer()
  if (location === null) throw new Error(`sign-out form answered ${posted.status}`)
  return new URL(location, confirm.url)
}

/** The HTTP status a server-function call ends with: 200, or the status of its ServerFunctionError. */
export async function statusOf (call: Promise<unknown>): Promise<number | string> {
  return await call.then(() => 200, (err: unknown) => err instanceof ServerFunctionError ? err.status : String(err))
}

export interface CampaignApp {
  kernel: Kernel
  baseUrl: URL
  /** The session cookie of the development IDP's staff user, signed in at start. */
  staff: string
  /** A new session cookie of the development IDP user with `role`. */
  login(role: string): Promise<string>
  /** Call a server function with a session (the staff one unless another cookie is given). */
  call<T>(name: string, args: object, cookie?: string): Promise<T>
}

/** `[campaign]` settings that start the embedded development IDP, with `more` settings. */
export function withDevIdp (more: Record<string, unknown> = {}): { campaign: Record<string, unknown> } {
  return { campaign: { dev_idp: true, ...more } }
}

/** Whether this run keeps the campaign's data and sessions in PostgreSQL and Redis (BERTH_TEST_CAMPAIGN_BACKEND=shared). */
export const onSharedBackends = (): boolean => process.env.BERTH_TEST_CAMPAIGN_BACKEND === 'shared'

/** Run test files (`load` imports them) with the campaign's data in PostgreSQL and its sessions in Redis; skipped, or failed under CI, without them. */
export async function onSharedBackendsToo (t: ComponentTest, load: () => Promise<unknown>): Promise<void> {
  // Loaded here, when a run asks for the shared backends: the in-process tests need none of it (scripts/test-tier.js).
  const [{ ensureDebianPackages, requireComponent }, { runPostgres }] = await Promise.all([import('./component.js'), import('./postgres.js')])
  if (await requireComponent(t, 'postgresql-15', runPostgres) === undefined) return
  if (await requireComponent(t, 'redis-server', async () => { await ensureDebianPackages(['redis-server']); return true }) === undefined) return
  process.env.BERTH_TEST_CAMPAIGN_BACKEND = 'shared'
  await load()
}

/** The [campaign] settings of the backends this run tests: a fresh database and a Redis of the test's own when shared, nothing by default. */
export async function campaignBackends (t: { teardown(fn: () => void | Promise<void>): void }): Promise<Record<string, unknown>> {
  if (!onSharedBackends()) return {}
  const [{ postgresDatabase }, { ownRedis }] = await Promise.all([import('./postgres.js'), import('./redis.js')])
  return { database_url: await postgresDatabase(t), redis_url: (await ownRedis(t)).url }
}

/** The campaign plugin and the development IDP in a started test kernel on the backends this run tests, with more `[campaign]` settings from `config`. */
export async function campaignKernel (t: { teardown(fn: () => void | Promise<void>): void }, config: Record<string, unknown> = {}, options: Pick<TestKernelOptions, 'logger'> = {}): Promise<Kernel> {
  const kernel = await testKernel(t, { ...options, plugins: [devIdp, campaign], config: withDevIdp({ ...await campaignBackends(t), ...config }) })
  if (onSharedBackends() && kernel.service('campaign').sessions.kind !== 'redis') throw new Error('BERTH_TEST_CAMPAIGN_BACKEND=shared, but the sessions are not in Redis')
  return kernel
}

/** The campaign plugin in a test kernel with the development IDP (more `[campaign]` settings from `config`), with a staff session. */
export async function campaignApp (t: { teardown(fn: () => void | Promise<void>): void }, config: Record<string, unknown> = {}): Promise<CampaignApp> {
  const kernel = await campaignKernel(t, config)
  const baseUrl = kernel.url('app')
  const users = kernel.service('campaign').devIdp?.users ?? []
  const login = async (role: string): Promise<string> => {
    const user = users.find(u => u.role === role)
    if (user === undefined) throw new Error(`the development IDP has no ${role} user`)
    return (await scriptedLogin(baseUrl, user)).cookie
  }
  const staff = await login('staff')
  const call = async <T>(name: string, args: object, cookie = staff): Promise<T> => await callServerFunction<T>(name, args, { baseUrl, headers: { cookie } })
  return { kernel, baseUrl, staff, login, call }
}

/** A URL inside a campaign module's folder, for loading its prompts and templates as the module does. */
export const moduleUrl = (id: string): string => new URL(`../../plugins/campaign/modules/${id}/manifest.ts`, import.meta.url).href

/** The campaign's module store on an LMDB environment a test opened itself (to write stored records first). */
export const campaignStoreOn = (env: RootDatabase): LmdbCampaignStore =>
  new LmdbCampaignStore({ db: name => env.openDB({ name }), transaction: async fn => await env.transaction(fn) })

/** The campaign's module store on an LMDB environment of the test's own, closed at its end. */
export function lmdbCampaignStore (t: { teardown(fn: () => void | Promise<void>): void }): LmdbCampaignStore {
  const env = open({ path: tempDir(t), compression: false })
  t.teardown(async () => { await env.close() })
  return campaignStoreOn(env)
}
