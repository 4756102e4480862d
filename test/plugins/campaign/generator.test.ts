// The generative provider's bound on waiting: a stand-in for a language model on 127.0.0.1 that takes
// requests and never answers, one slot, twelve calls at once. Every call is answered once the
// time-out has passed (its wait for the slot counted in it, as the notes say): from the local engine with a fallback note, shown above
// the page in headless Chromium, or with [campaign].generator_fallback = false a 503 naming the provider.
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ServerFunctionError } from '../../../plugins/campaign/client.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import { builtUi, signIn } from '../../support/campaign-browser.js'
import { campaignApp } from '../../support/campaign.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'

const TIMEOUT_SECONDS = 1
const CALLS = 12
const AUDIT = 'Voting machines were not hacked in any county, according to the 2024 state audit by the Elections Board.'
const CLAIM = 'Voting machines were hacked in every county.'

/** A stand-in for a language model that hangs: it reads each request and never answers. */
async function startHangingModel (t: { teardown: (fn: () => unknown) => void }): Promise<{ url: string, requests: () => number }> {
  let requests = 0
  const server: Server = createServer(request => {
    requests++
    request.resume()
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => { await new Promise<void>(resolve => { server.close(() => { resolve() }); server.closeAllConnections() }) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests: () => requests }
}

/** Run `CALLS` calls at once; each settles with its outcome. */
async function concurrently<T> (call: () => Promise<T>): Promise<Array<{ value?: T, error?: unknown }>> {
  return await Promise.all(Array.from({ length: CALLS }, async () => {
    return await call().then(value => ({ value }), (error: unknown) => ({ error }))
  }))
}

t.test('a hanging provider with one slot: twelve calls answered by the local engine within the time-out, each with the note', async t => {
  const model = await startHangingModel(t)
  const app = await campaignApp(t, { generator_url: model.url, generator_model: 'stand-in', generator_timeout_seconds: TIMEOUT_SECONDS, generator_concurrency: 1 })
  await app.call('kb-ingest', { title: 'State audit', text: AUDIT })
  interface Counter { short: string, engine: string, fallback_note?: string }
  const results = await concurrently(async () => await app.call<Counter>('counter-messaging', { text: CLAIM }))
  t.same(results.filter(r => r.error !== undefined).map(r => String(r.error)), [], 'no call failed')
  for (const { value } of results) {
    t.match(value, { engine: /^local/, short: /^The claim that “Voting machines were hacked in every county” is not supported: / })
    t.match(value?.fallback_note, new RegExp(`^the generative provider at ${model.url.replace(/\./g, '\\.')} (did not answer within ${TIMEOUT_SECONDS} s( \\(\\d+\\.\\d s of it waiting for a free slot\\))?|is busy: \\d+ requests are waiting; try again shortly); this answer is the local engine's\\.$`))
  }
  t.ok(results.some(r => /waiting for a free slot/.test(r.value?.fallback_note ?? '')), 'a queued call counts its wait for the slot in the time-out')
  const waits = results.map(r => Number(/\((\d+\.\d) s of it waiting for a free slot\)/.exec(r.value?.fallback_note ?? '')?.[1] ?? 0))
  t.ok(waits.every(wait => wait <= TIMEOUT_SECONDS), `no call waited for the slot past the time-out (waits ${waits.join(', ')} s): none was served after the others`)
  t.ok(model.requests() >= 1 && model.requests() <= CALLS, `the model was asked ${model.requests()} time(s), never more than once per call`)
})

t.test('with generator_fallback = false the same calls end in a 503 naming the provider, as soon', async t => {
  const model = await startHangingModel(t)
  const app = await campaignApp(t, { generator_url: model.url, generator_model: 'stand-in', generator_timeout_seconds: TIMEOUT_SECONDS, generator_concurrency: 1, generator_fallback: false })
  await app.call('kb-ingest', { title: 'State audit', text: AUDIT })
  const results = await concurrently(async () => await app.call('counter-messaging', { text: CLAIM }))
  for (const { error } of results) {
    t.ok(error instanceof ServerFunctionError)
    t.match(error, { status: 503, message: new RegExp(`^the generative provider at ${model.url.replace(/\./g, '\\.')} (did not answer within ${TIMEOUT_SECONDS} s|is busy: )`) })
  }
})

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('the page shows the fallback note above the local engine\'s counter-message', async t => {
    await builtUi()
    const model = await startHangingModel(t)
    const app = await campaignApp(t, { generator_url: model.url, generator_model: 'stand-in', generator_timeout_seconds: TIMEOUT_SECONDS })
    await app.call('kb-ingest', { title: 'State audit', text: AUDIT })
    const staff = (app.kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
    const browser = await headlessBrowser(t, executablePath)
    const page = await browser.newPage()
    await signIn(page, app.baseUrl, staff, '/disinfo-warning')
    await page.fill('textarea[name="text"]', CLAIM)
    await page.click('form.stack button[type="submit"]')
    await page.waitForSelector('[data-testid="disinfo-level"]')
    await page.click('[data-testid="disinfo-result"] form button[type="submit"]')
    await page.waitForSelector('[data-testid="counter-short"]')
    t.match(await page.textContent('[data-testid="counter-short"]'), /^The claim that “Voting machines were hacked in every county” is not supported: /)
    t.match(await page.textContent('[data-testid="fallback-note"]'), new RegExp(`^the generative provider at ${model.url.replace(/\./g, '\\.')} did not answer within ${TIMEOUT_SECONDS} s( \\(\\d+\\.\\d s of it waiting for a free slot\\))?; this answer is the local engine's\\.$`))
  })
}
