// The app's pages cannot be framed or sniffed, and server functions refuse calls from other sites'
// pages: the headers on HTML and other answers, a cross-origin POST refused with a CBOR 403 (a
// same-origin one, and one with no Origin, served), and real Chromium refusing to frame a page.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeCbor, encodeCbor } from '../../../plugins/campaign/cbor.js'
import type { DevUser } from '../../../plugins/dev-idp/users.js'
import { campaignKernel, scriptedLogin } from '../../support/campaign.js'
import { builtUi } from '../../support/campaign-browser.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { pollUntil } from '../../support/poll.js'

t.test('HTML answers carry a policy that forbids framing; every answer is nosniff; foreign origins are refused', async t => {
  await builtUi()
  const kernel = await campaignKernel(t)
  const app = kernel.url('app')
  const staff = (kernel.service('campaign').devIdp?.users ?? []).find(u => u.role === 'staff') as DevUser
  const { cookie } = await scriptedLogin(app, staff)

  const page = await fetch(new URL('/knowledge-base', app), { headers: { cookie } })
  t.equal(page.status, 200)
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/)
  t.same([page.headers.get('x-frame-options'), page.headers.get('x-content-type-options'), page.headers.get('referrer-policy')], ['DENY', 'nosniff', 'same-origin'])
  const refusal = await fetch(new URL('/auth?redirect_url=//elsewhere.example/', app), { redirect: 'manual' })
  t.same([refusal.status, refusal.headers.get('content-type')?.startsWith('text/html')], [400, true], 'a refusal page')
  t.match(refusal.headers.get('content-security-policy'), /frame-ancestors 'none'/, 'is HTML with the policy too')
  const call = async (origin: string | undefined): Promise<{ status: number, body: unknown }> => {
    const response = await fetch(new URL('/api/check-auth', app), {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/cbor', ...(origin !== undefined ? { origin } : {}) },
      body: encodeCbor({})
    })
    t.equal(response.headers.get('x-content-type-options'), 'nosniff')
    t.equal(response.headers.get('content-security-policy'), null, 'no page policy on a CBOR answer')
    return { status: response.status, body: decodeCbor(Buffer.from(await response.arrayBuffer())) }
  }
  t.match(await call('http://campaign-lookalike.example'), { status: 403, body: { error: /^cross-origin call refused: http:\/\/campaign-lookalike\.example is not this application's origin$/, code: 'BERTH_CROSS_ORIGIN' } })
  t.match(await call('null'), { status: 403 }, 'an opaque origin (a sandboxed frame, a file) too')
  t.match(await call(app.origin), { status: 200, body: { authenticated: true } }, 'the app\'s own origin is served')
  t.match(await call(undefined), { status: 200 }, 'a client that sends no Origin (a script) is not a page on another site')
})

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('Chromium does not show the app inside another site\'s frame', async t => {
    const kernel = await campaignKernel(t)
    const target = new URL('/auth?redirect_url=//elsewhere.example/', kernel.url('app')).href
    // Another site: another host on loopback, a page that frames the app.
    const foreign = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Other site</title><iframe id="app" src="${target}"></iframe>`)
    })
    await new Promise<void>(resolve => foreign.listen(0, '127.0.0.2', resolve))
    t.teardown(() => { foreign.close() })
    const browser = await headlessBrowser(t, executablePath)
    const page = await browser.newPage()
    const blocked = new Promise<string>(resolve => { page.on('console', message => { if (/frame-ancestors|Refused to (display|frame)/i.test(message.text())) resolve(message.text()) }) })
    await page.goto(`http://127.0.0.2:${(foreign.address() as AddressInfo).port}/`)
    t.match(await blocked, /frame-ancestors 'none'/, 'Chromium refused the frame for the policy')
    const frame = await pollUntil(() => page.frames().find(f => f !== page.mainFrame()), { what: 'the frame' })
    t.notMatch(await frame.content(), /elsewhere|Sign-in|redirect/i, 'and shows nothing of the app in it')
  })
}
