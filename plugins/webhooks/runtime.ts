// The webhooks plugin at work: registrations, the background runner and its work (a named service
// is force-pulled and recreated, or built from the pushed commit when it is built from git; __infra__ pulls the working directory with git and deploys what
// changed), and the routes. Imported by setup only.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Unavailable, type PluginContext } from '../../kernel/index.js'
import type { DeployResult } from '../reconciler/api.js'
import type { ReconcilerService } from '../reconciler/index.js'
import type { WebhookService } from './index.js'
import { INFRA, Registrations, type Registration } from './registrations.js'
import { webhookRoutes } from './routes.js'
import { Runner, type Work } from './runner.js'
import { controlState, leaderRoutes } from '../cluster/index.js'

const run = promisify(execFile)
const GIT_TIMEOUT_MS = 120_000

/** One line for the history; a deploy with errors is a failure. */
function summary (result: DeployResult): string {
  if (result.errors.length > 0) throw new Error(result.errors.map(e => `${e.service}: ${e.error}`).join('; '))
  return result.changed.length === 0 ? 'nothing changed' : `deployed ${result.changed.join(', ')}`
}

export function setupWebhooks (ctx: PluginContext, reconciler: ReconcilerService): WebhookService {
  const registrations = new Registrations(controlState(ctx).db<Registration>('registrations'))
  const gitPull = async (): Promise<string> => {
    try {
      const { stdout } = await run('git', ['pull', '--ff-only'], { cwd: ctx.cwd, timeout: GIT_TIMEOUT_MS, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } })
      return stdout.trim().split('\n')[0] ?? ''
    } catch (err) {
      const { stderr, message } = err as { stderr?: string, message: string }
      throw new Error(`git pull in ${ctx.cwd} failed: ${(stderr ?? '').trim().split('\n').at(-1) ?? message}`)
    }
  }
  const work: Work = async ({ registration, push }) => {
    const by = `webhook ${registration.id}`
    ctx.log.info({ webhook: registration.id, repo: push.repo, sha: push.sha, service: registration.service_name }, 'push received: deploying')
    if (registration.service_name === INFRA) {
      await gitPull()
      return summary(await reconciler.reconciler.deployFiles({ by }))
    }
    // A service built from git builds the pushed commit (named by its full hash; else its branch's newest).
    return summary(await reconciler.reconciler.redeploy(registration.service_name, by, /^[0-9a-f]{40}$/.test(push.sha) ? push.sha : undefined))
  }
  const runner = new Runner(async job => await ctx.track(work(job)))
  // A redeploy whose service waits for an offline node is refused (503) before it is accepted; an unknown service fails in the run, as before.
  const reachable = (service: string): void => {
    try {
      reconciler.reconciler.assertReachable(service)
    } catch (err) {
      if (err instanceof Unavailable) throw err
    }
  }
  ctx.http('control', leaderRoutes(ctx.useOptional('cluster'), webhookRoutes(registrations, runner, ctx.use('tokens'), reachable, service => reconciler.reconciler.specs().find(s => s.name === service)?.project)), { prefix: '/api/v1/webhooks' })
  return { runner }
}
