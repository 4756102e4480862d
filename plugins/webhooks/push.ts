// What a git host sends on a push, checked and read: the signature over the raw body (HMAC-SHA256 in
// `X-Hub-Signature-256` for `git`, GitHub and Gitea; Gitea's bare-hex `X-Gitea-Signature` too; the
// shared token in `X-Gitlab-Token` for GitLab), compared in constant time, and the body read as
// {repo, branch, sha} whichever provider sent it.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

export const PROVIDERS = ['git', 'github', 'gitea', 'gitlab'] as const
export type Provider = typeof PROVIDERS[number]

export interface Push {
  repo: string
  branch: string
  sha: string
}

function sameBytes (a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Whether the request carries a valid signature (or token) for `secret`. */
export function signatureValid (provider: Provider, headers: IncomingHttpHeaders, body: Buffer, secret: string): boolean {
  const header = (name: string): string | undefined => { const value = headers[name]; return Array.isArray(value) ? value[0] : value }
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

/** The push a body describes; a string naming what is missing when it is not one. */
export function readPush (provider: Provider, body: unknown): Push | string {
  if (typeof body !== 'object' || body === null) return 'the body is not a JSON object'
  const b = body as Record<string, unknown>
  const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined
  const nested = (key: string, field: string): string | undefined => {
    const object = b[key]
    return typeof object === 'object' && object !== null ? text((object as Record<string, unknown>)[field]) : undefined
  }
  const repo = provider === 'git' ? text(b.repo) : provider === 'gitlab' ? nested('project', 'path_with_namespace') : nested('repository', 'full_name')
  const ref = text(b.ref)
  const sha = provider === 'git' ? text(b.sha) : provider === 'gitlab' ? text(b.checkout_sha) ?? text(b.after) : text(b.after)
  const missing = [repo === undefined && 'repo', ref === undefined && 'ref', sha === undefined && 'sha'].filter(Boolean)
  if (missing.length > 0 || repo === undefined || ref === undefined || sha === undefined) return `the ${provider} push body has no ${missing.join(', ')}`
  const branch = /^refs\/heads\/(.+)$/.exec(ref)?.[1]
  if (branch === undefined) return `ref ${ref} is not a branch (refs/heads/<branch>)`
  return { repo, branch, sha }
}
