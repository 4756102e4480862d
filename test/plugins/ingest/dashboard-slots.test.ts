// A device's firmware slots on its dashboard page, in headless Chromium against a real server: the
// slots as the device reported them (POST /ota/status), the running one marked, and its revert and
// refusal with their reasons; on a phone the page keeps to its width. A device that never reported
// says so in one line.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { DASHBOARD_BUILD_DIR } from '../../../plugins/ingest/routes/dashboard.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { checkPhoneLayout, PHONE } from '../../support/phone-layout.js'
import { API_KEY, passwordOf, telemetryServer } from './harness.js'

const DEVICE = 'a1b2c3d4e5f60042'
const QUIET = 'a1b2c3d4e5f60043'
const NEW = 'e'.repeat(64)
const OLD = 'f'.repeat(64)

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('the device page shows its slots, its revert and its refusal', async t => {
    if (!existsSync(join(DASHBOARD_BUILD_DIR, 'index.html'))) await promisify(execFile)('npm', ['run', 'build:ui'], { cwd: join(DASHBOARD_BUILD_DIR, '..', '..'), timeout: 180_000 })
    const server = await telemetryServer(t)
    for (const [sequence, device] of [DEVICE, QUIET].entries()) {
      const info = encodeChunk({ device, sequence, payload: { type: 'DeviceInfo', record: { serial: 'SN', hardware_version: 'mps2', software_type: 'main', software_version: '1.0.0', build_id: '' } } })
      t.equal((await server.ingest(info)).json.accepted, 1)
    }
    const report = async (body: unknown): Promise<void> => {
      const response = await fetch(new URL('/ota/status', server.base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      t.equal(response.status, 200)
    }
    await report({ device: DEVICE, result: { image: NEW, status: 'digest_mismatch' } })
    await report({
      device: DEVICE,
      running_slot: 0,
      slots: [{ slot: 0, state: 'confirmed', version: '1.0.0', image: OLD }, { slot: 1, state: 'bad', version: '1.1.0', image: NEW }],
      download: null,
      event: { kind: 'revert', slot: 1, reason: 'watchdog' }
    })

    const context = await headlessBrowser(t, executablePath)
    const page = await context.newPage()
    await page.goto(new URL('/dashboard/', server.base).href)
    await page.fill('input[name="user"]', 'viewer')
    await page.fill('input[name="password"]', passwordOf('viewer'))
    await page.click('button[type="submit"]')
    await page.waitForSelector('.me')
    await page.goto(new URL(`/dashboard/#/devices/${DEVICE}`, server.base).href)
    await page.waitForSelector('table.slots tbody tr')
    t.same(await page.locator('table.slots tbody tr').allTextContents(), [`0 (running)confirmed1.0.0${OLD.slice(0, 12)}`, `1bad1.1.0${NEW.slice(0, 12)}`], 'each slot: its state, version and image; the running one marked')
    t.equal(await page.locator('tr.slot.bad').count(), 1, 'the bad slot marked as such')
    const problems = await page.locator('ul.slot-problems li').allTextContents()
    t.equal(problems.length, 2)
    t.match(problems[0], /: 1\.1\.0 reverted in slot 1: watchdog$/, 'the revert first, newest first')
    t.match(problems[1], /: an image refused: its SHA-256 is not the one offered$/, 'then the refused download')
    await page.setViewportSize(PHONE)
    await checkPhoneLayout(t, page, 'a device page with slots')

    await page.goto(new URL(`/dashboard/#/devices/${QUIET}`, server.base).href)
    await page.waitForSelector('text=No firmware slots reported.')
    t.pass('a device that never reported says so')
  })
}
