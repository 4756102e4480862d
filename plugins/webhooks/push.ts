// What a git host sends, checked and read: the signature over the raw body (HMAC-SHA256 in
// `X-Hub-Signature-256` for `git`, GitHub and Gitea; Gitea's bare-hex `X-Gitea-Signature` too; the
// shared token in `X-Gitlab-Token` for GitLab), compared in constant time; the event its header names;
// and the body read as a push to deploy, {repo, branch, sha} whichever provider sent it, or as one
// that deploys nothing (a ping, a test delivery of Gitea or GitLab, another event, a tag, a deleted
// branch).
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

export const PROVIDERS = ['git', 'github', 'gitea', 'gitlab'] as const
export type Provider = typeof PROVIDERS[number]

export interface Push {
  repo: string
  branch: string
  sha: string
}

/** A signed delivery that deploys nothing (a ping, a test, another event, a tag, a deleted branch), and why. */
export interface Ignored {
  /** The repository it names, if any (an organisation's ping names none). */
  repo: string | undefined
  ignored: string
}

function sameBytes (a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

function headerOf (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The event a delivery carries, from the provider's header: `push`, `ping` (GitHub, when a hook is
 * added), or another (a tag push, a merge request, …). `push` when the header is absent (the `git`
 * provider, scripts); GitLab's `Push Hook` (and `Push Event`, which some versions sent on a test) is
 * `push`.
 */
export function eventOf (provider: Provider, headers: IncomingHttpHeaders): string {
  const header = (name: string): string | undefined => headerOf(headers, name)
  switch (provider) {
    case 'git': return 'push'
    case 'github': return header('x-github-event') ?? 'push'
    case 'gitea': return header('x-gitea-event') ?? header('x-forgejo-event') ?? header('x-github-event') ?? 'push'
    case 'gitlab': {
      const event = header('x-gitlab-event')
      return event === undefined || /^push (hook|event)$/i.test(event) ? 'push' : event
    }
  }
}

/** Whether the request carries a valid signature (or token) for `secret`. */
export function signatureValid (provider: Provider, headers: IncomingHttpHeaders, body: Buffer, secret: string): boolean {
  const header = (name: string): string | undefined => headerOf(headers, name)
  if (provider === 'gitlab') {
    const token = header('x-gitlab-token')
    return token !== undefined && sameBytes(Buffer.from(token), Buffer.from(secret))
  }
  const expected = createHmac('sha256', secret).update(body).digest()
  const prefixed = /^sha256=([0-9a-f]{64})$/i.exec(header('x-hub-signature-256') ?? '')?.[1]
  const bare = provider === 'gitea' ? /^([0-9a-f]{64})$/i.exec(header('x-gitea-signature') ?? '')?.[1] : undefined
  const given = prefixed ?? bare
  return given !== undefined && sameBytes(Buffer.from(given, 'hex'), expected)
}

const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

function field (body: Record<string, unknown>, key: string, name: string): string | undefined {
  const object = body[key]
  return typeof object === 'object' && object !== null ? text((object as Record<string, unknown>)[name]) : undefined
}

/** The repository a body names (`owner/name`), whatever the event; undefined when it names none (a ping of an organisation's hook). */
function repoOf (provider: Provider, body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const b = body as Record<string, unknown>
  return provider === 'git' ? text(b.repo) : provider === 'gitlab' ? field(b, 'project', 'path_with_namespace') : field(b, 'repository', 'full_name')
}

/**
 * What a delivery asks for: a push to deploy, one to ignore, or a string naming what is missing when
 * a push event is not a push. Test deliveries are pushes to ignore: Gitea's test button sends
 * `before` equal to `after` (the branch's head, or zeros since 1.22), GitLab's sends the default
 * branch's last commits with `before` set to the oldest of them; a real push never has its `before`
 * among its own commits.
 */
export function readDelivery (provider: Provider, event: string, body: unknown): Push | Ignored | string {
  if (typeof body !== 'object' || body === null) return 'the body is not a JSON object'
  const b = body as Record<string, unknown>
  const repo = repoOf(provider, b)
  if (event !== 'push') return { repo, ignored: event === 'ping' ? 'a ping: the hook works; nothing is deployed' : `${event} events deploy nothing; pushes to a branch do` }
  const ref = text(b.ref)
  const sha = provider === 'git' ? text(b.sha) : provider === 'gitlab' ? text(b.checkout_sha) ?? text(b.after) : text(b.after)
  const missing = [repo === undefined && 'repo', ref === undefined && 'ref', sha === undefined && 'sha'].filter(Boolean)
  if (missing.length > 0 || repo === undefined || ref === undefined || sha === undefined) return `the ${provider} push body has no ${missing.join(', ')}`
  const before = text(b.before)
  const commits = Array.isArray(b.commits) ? b.commits.map(commit => typeof commit === 'object' && commit !== null ? text((commit as Record<string, unknown>).id) : undefined) : []
  if (before !== undefined && (before === text(b.after) || commits.includes(before))) return { repo, ignored: 'a test delivery (its before is its after or one of its commits): the hook works; nothing is deployed' }
  const branch = /^refs\/heads\/(.+)$/.exec(ref)?.[1]
  if (branch === undefined) return { repo, ignored: `ref ${ref} is not a branch: nothing is deployed` }
  if (/^0+$/.test(sha)) return { repo, ignored: `branch ${branch} was deleted: nothing is deployed` }
  return { repo, branch, sha }
}
