// Reload: restart the server in place, then redeploy every service. The request records the reload
// (`restarting`) in LMDB and asks the kernel's host for the restart (ctx.restart); the kernel that
// starts next finds the record and redeploys every service from the files (images pulled, every
// container recreated one replica at a time), recording the outcome for `GET /api/v1/reload`. A
// reload cut short by a crash is finished by the next start.
import { randomBytes } from 'node:crypto'
import { Conflict, messageOf } from '../../kernel/index.js'
import type { DeployResult, Reconciler } from './reconciler.js'
import type { ReconcilerState } from './state.js'
import { RECONCILER_CODES } from './errors.js'

/** restarting → redeploying → done or failed. */
export type ReloadStage = 'restarting' | 'redeploying' | 'done' | 'failed'

export interface ReloadRecord {
  id: string
  requested_at: string
  /** Name of the token that asked for it. */
  by?: string
  state: ReloadStage
  finished_at?: string
  /** The redeploy's result, once done. */
  result?: DeployResult
  /** Why it failed: a configuration the server cannot use, or service files it cannot read. */
  error?: string
}

function underway (record: ReloadRecord | undefined): record is ReloadRecord {
  return record !== undefined && (record.state === 'restarting' || record.state === 'redeploying')
}

/** Record a reload and ask for the restart; a refused restart is recorded as failed and thrown. */
export async function requestReload (state: ReconcilerState, restart: () => Promise<void>, by?: string): Promise<ReloadRecord> {
  const last = state.lastReload()
  if (underway(last)) throw new Conflict(`a reload is under way (${last.id}, ${last.state})`, { code: RECONCILER_CODES.RELOAD_UNDERWAY })
  const record: ReloadRecord = { id: randomBytes(6).toString('hex'), requested_at: new Date().toISOString(), ...(by !== undefined && { by }), state: 'restarting' }
  await state.recordReload(record)
  try {
    await restart()
  } catch (err) {
    await state.recordReload({ ...record, state: 'failed', finished_at: new Date().toISOString(), error: messageOf(err) })
    throw err
  }
  return record
}

/** Once a kernel has started: the redeploy of a reload that restarted it (or was cut short), if any. */
export async function finishReload (state: ReconcilerState, reconciler: Reconciler): Promise<void> {
  const last = state.lastReload()
  if (!underway(last)) return
  await state.recordReload({ ...last, state: 'redeploying' })
  try {
    const result = await reconciler.deployFiles({ reload: true, by: last.by })
    await state.recordReload({ ...last, state: 'done', finished_at: new Date().toISOString(), result })
  } catch (err) {
    await state.recordReload({ ...last, state: 'failed', finished_at: new Date().toISOString(), error: messageOf(err) })
  }
}
