// Thumbs up or down on a result of a module (record-feedback with the module's id and the result's
// resource_id), shown only to roles that may rate; a second click on the chosen thumb withdraws the rating.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo } from './api.js'
import { Icon } from './icons.js'

export function Feedback ({ auth, moduleId, resourceId }: { auth: AuthInfo, moduleId: string, resourceId: string }) {
  const record = useCall<{ recorded: boolean }>('record-feedback')
  const [chosen, setChosen] = useState<boolean | undefined>(undefined)
  if (!auth.functions.includes('record-feedback')) return null
  const rate = (positive: boolean): void => {
    const withdraw = chosen === positive
    void record.run({ module_id: moduleId, resource_id: resourceId, is_positive: positive, is_active: !withdraw })
      .then(done => { if (done !== undefined) setChosen(withdraw ? undefined : positive) })
  }
  return (
    <p class="feedback" data-testid="feedback" data-resource={resourceId}>
      <button type="button" class="ghost" title="Helpful" aria-label="Helpful" aria-pressed={chosen === true} onClick={() => { rate(true) }}><Icon name="thumb-up" /></button>{' '}
      <button type="button" class="ghost" title="Not helpful" aria-label="Not helpful" aria-pressed={chosen === false} onClick={() => { rate(false) }}><Icon name="thumb-down" /></button>
      {record.error !== undefined && <span class="error"> {record.error}</span>}
      {chosen !== undefined && <span class="muted"> thanks</span>}
    </p>
  )
}
