// The telemetry dashboard in headless Chromium against a real server: Basic sign-in (a wrong password
// refused), the overview, a device that starts sending appears in the list without a reload, a
// device's page with its metric chart and its fault's symbol, the chart over the chosen range with a
// hole in a series drawn as a gap, the crash issues and an issue's page (resolved by a provisioner, not
// offered to a viewer), a device's timeline, the devices sorted with a metric column, a metric across
// the fleet, the alert history, the builds without symbols, an OTA release made and paused by a
// provisioner (no form for a viewer), and the groups form shown to a provisioner but not to a viewer (whom
// the API refuses as well). What the test puts in place (symbols, an offline device, a fleet, samples
// in the past) goes through the storage contract, so it runs on either backend. A fault's coredump
// opens on its device's page into the globals the build's ELF names in it and its regions. On a phone (390 px)
// every view works for each role. Screenshots of the main views go to BERTH_SCREENSHOTS
// (docs/screenshots holds the ones published).
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import devIdp from '../../../plugins/dev-idp/index.js'
import { DASHBOARD_BUILD_DIR } from '../../../plugins/ingest/routes/dashboard.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload, FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import ingest from '../../../plugins/ingest/index.js'
import { objectSymbols } from '../../../plugins/ingest/elf.js'
import { emptyWrites, pendingKey, type Device, type StoredFault, type StoredMetric } from '../../../plugins/ingest/storage/contract.js'
import { chromiumBinary, headlessBrowser } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { capturedLogger, testKernel } from '../../support/kernel.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { armToolchain } from '../../support/firmware.js'
import { buildGlobalsElf } from '../../support/globals-elf.js'
import { checkPhoneLayout, PHONE } from '../../support/phone-layout.js'
import { API_KEY, backendSettings, passwordOf, ROLES, telemetryServer, type TestRole } from './harness.js'

/** The dashboard is built by `npm run build`; a single test file run after a fresh clone builds it here. */
async function builtDashboard (): Promise<void> {
  if (existsSync(join(DASHBOARD_BUILD_DIR, 'index.html'))) return
  await promisify(execFile)('npm', ['run', 'build:ui'], { cwd: join(DASHBOARD_BUILD_DIR, '..', '..'), timeout: 180_000 })
}

const SENSOR = 'a1b2c3d4e5f60001'
const SIMULATOR = fileURLToPath(new URL('../../../dist/bench/device-sim.js', import.meta.url))
const info: ChunkPayload = { type: 'DeviceInfo', record: { serial: 'SN-1', hardware_version: 'evt-2', software_type: 'main', software_version: '2.1.0', build_id: '' } }
const metrics = (n: number): ChunkPayload => ({ type: 'Metrics', record: { uptime_ms: n, entries: [{ key: 'battery_mv', kind: 'gauge', value: 3600 + n * 10, uptime_ms: n }] } })
const fault: ChunkPayload = { type: 'FaultRecord', record: { pc: 0x0800abcd, lr: 0x08000123, sp: 0, psr: 0, cfsr: 0x8200, hfsr: 0, mmfar: 0, bfar: 0, uptime_ms: 9 } }
const trace: ChunkPayload = { type: 'Trace', record: { uptime_ms: 10, dropped: 0, data: Buffer.from('radio up\n') } }
const heartbeat: ChunkPayload = { type: 'Heartbeat', record: { uptime_ms: 7_500_000, boot_count: 3 } }

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** What the test reads of the uPlot instance on the chart's element (plugins/ingest/dashboard/src/chart.tsx). */
interface PlotHost {
  plot?: {
    status: 0 | 1
    scales: { x: { min: number, max: number } }
    /** x, then the minimum, the maximum and the average */
    data: [ArrayLike<number>, ...Array<ArrayLike<number | null>>]
    bbox: { left: number, top: number, width: number, height: number }
    valToPos: (value: number, scale: string, canvasPixels: boolean) => number
    ctx: { getImageData: (x: number, y: number, width: number, height: number) => { data: ArrayLike<number> } }
  }
}

interface ChartView {
  /** The x scale, ms since the epoch. */
  from: number
  to: number
  /** The data given to uPlot: x in ms, and the average (null: a gap). */
  x: number[]
  avg: Array<number | null>
  /** Per time asked about: where it is across the plot (0 to 1), and whether anything opaque is drawn in its pixel columns. */
  columns: Array<{ across: number, inked: boolean }>
}

/** The drawn chart of the page, and its pixel columns at the times `at` (ms). */
async function readChart (page: Page, at: number[] = []): Promise<ChartView> {
  return await pollUntil(async () => await page.$eval('.chart', (element, times) => {
    const plot = (element as unknown as PlotHost).plot
    if (plot === undefined || plot.status !== 1) return false
    const { left, top, width, height } = plot.bbox
    const columns = times.map(time => {
      const x = Math.round(plot.valToPos(time / 1000, 'x', true))
      // The series are opaque; the grid lines are drawn at an alpha of about 18 (of 255).
      const { data } = plot.ctx.getImageData(x - 1, top, 3, height)
      let inked = false
      for (let i = 3; i < data.length; i += 4) if (data[i] > 128) inked = true
      return { across: (x - left) / width, inked }
    })
    return { from: plot.scales.x.min * 1000, to: plot.scales.x.max * 1000, x: Array.from(plot.data[0], v => v * 1000), avg: Array.from(plot.data[3]), columns }
  }, at), { what: 'the chart drawn' })
}

async function signIn (page: Page, base: URL, role: TestRole, password: string): Promise<void> {
  await page.goto(new URL('/dashboard/', base).href)
  await page.fill('input[name="user"]', role)
  await page.fill('input[name="password"]', password)
  await page.click('button[type="submit"]')
}

/** Every view of the dashboard, by its address. */
const VIEWS = ['#/', '#/issues', '#/devices', `#/devices/${SENSOR}`, '#/fleet-metrics', '#/releases', '#/groups', '#/ota', '#/firmware', '#/alerts']

/** Run in the page: whether the navigation keeps its dark bar behind every link, and the table cells set on more than one line. */
const PHONE_READING = `(() => {
  const nav = document.querySelector('nav')
  const bar = nav.getBoundingClientRect()
  const links = [...nav.querySelectorAll('a')].map(a => a.getBoundingClientRect())
  // A cell's text on more than one line: its boxes (one per text or inline element) do not share a line.
  const wrapped = cell => {
    const range = document.createRange()
    range.selectNodeContents(cell)
    const rects = [...range.getClientRects()].filter(r => r.width > 0)
    return rects.length > 1 && Math.max(...rects.map(r => r.top)) - Math.min(...rects.map(r => r.top)) > Math.min(...rects.map(r => r.height)) / 2
  }
  return {
    background: getComputedStyle(nav).backgroundColor,
    linksOnBar: links.every(box => box.top >= bar.top && box.bottom <= bar.bottom && box.right <= innerWidth),
    brokenCells: [...document.querySelectorAll('main td')].filter(cell => cell.textContent.trim() !== '' && wrapped(cell)).map(cell => cell.textContent.slice(0, 40))
  }
})()`

const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
if (executablePath !== undefined) {
  t.test('on a phone (390 px), every view for each role: no sideways scroll, every control reachable, the navigation on its bar, table cells on one line', async t => {
    await builtDashboard()
    const server = await telemetryServer(t)
    const chunks = [info, metrics(1), fault, trace, heartbeat]
    t.equal((await server.ingest(Buffer.concat(chunks.map((payload, sequence) => encodeChunk({ device: SENSOR, sequence, payload }))))).json.accepted, chunks.length)
    const context = await headlessBrowser(t, executablePath)
    for (const role of ROLES) {
      const page = await context.newPage()
      await page.setViewportSize(PHONE)
      await signIn(page, server.base, role, passwordOf(role))
      await page.waitForSelector('.me')
      for (const view of VIEWS) {
        await page.evaluate(`location.hash = ${JSON.stringify(view)}`)
        await pollUntil(async () => await page.locator('main').count() === 1 && !(await page.textContent('main') ?? '').includes('Loading'), { what: `${view} shown to ${role}` })
        await checkPhoneLayout(t, page, `${role} ${view}`)
        const reading = await page.evaluate<{ background: string, linksOnBar: boolean, brokenCells: string[] }>(PHONE_READING)
        t.same([reading.background, reading.linksOnBar], ['rgb(15, 23, 42)', true], `${role} ${view}: the navigation's links on its dark bar`)
        t.same(reading.brokenCells, [], `${role} ${view}: every table cell on one line`)
      }
      await page.close()
    }
  })

  t.test('sign in, the overview, a device appearing live, its page, and the groups by role', async t => {
    await builtDashboard()
    const server = await telemetryServer(t)
    const shots = process.env.BERTH_SCREENSHOTS ?? tempDir(t, 'berth-dashboard-shots-')
    mkdirSync(shots, { recursive: true })
    const chunks = [info, metrics(1), metrics(2), metrics(3), fault, trace, heartbeat]
    t.equal((await server.ingest(Buffer.concat(chunks.map((payload, sequence) => encodeChunk({ device: SENSOR, sequence, payload }))))).json.accepted, 7)
    // What the symbolication plugin writes once the ELF is there (it runs in test/e2e/device.test.ts).
    const { storage } = server.service.telemetry
    const stored: StoredFault[] = []
    for await (const { value } of storage.series('faults', [SENSOR, 0], Number.MAX_SAFE_INTEGER)) stored.push(value)
    t.equal(stored.length, 1)
    // Found by scanning (an ELF without call-frame information), the snapshot ending at its last frame.
    const backtrace = [{ address: 0x0800abcc, symbol: 'sensor_poll at /src/main.c:42', unwind: 'scan' as const }, { address: 0x08000122, symbol: 'sensor_task at /src/main.c:57', unwind: 'scan' as const, truncated: true as const }]
    await storage.setSymbols(stored.map(fault => ({ key: pendingKey(fault), symbol: 'sensor_poll at /src/main.c:42', backtrace, final: true })))

    const context = await headlessBrowser(t, executablePath)
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', err => { problems.push(err.message) })
    page.on('console', message => { if (message.type() === 'error') problems.push(message.text()) })
    t.teardown(() => { if (problems.length > 0) t.comment(`browser errors: ${problems.join(' | ')}`) })
    await signIn(page, server.base, 'viewer', 'wrong')
    await page.waitForSelector('.error')
    t.match(await page.textContent('.error'), /authentication|credentials|401|sign/i, 'a wrong password is refused')
    await signIn(page, server.base, 'viewer', passwordOf('viewer'))
    await page.waitForSelector('.me')
    t.equal(await page.textContent('.me'), 'viewer (viewer)')
    await page.waitForSelector('[data-testid="online"] b')
    t.equal(await page.textContent('[data-testid="online"] b'), '1', 'the overview counts the online device')
    await page.waitForSelector('.live.on')
    await page.screenshot({ path: join(shots, 'overview.png'), fullPage: true })

    await page.goto(new URL('/dashboard/#/devices', server.base).href)
    await page.waitForSelector(`a[href="#/devices/${SENSOR}"]`)
    await page.waitForSelector('.live.on')
    const newcomer = 'a1b2c3d4e5f60002'
    t.equal((await server.ingest(encodeChunk({ device: newcomer, sequence: 1, payload: info }))).json.accepted, 1)
    await page.waitForSelector(`a[href="#/devices/${newcomer}"]`, { timeout: 10_000 })
    t.pass('a device that starts sending appears in the list without a reload')
    // The device simulator, as an operator runs it, streaming chunks over HTTP.
    const sim = await promisify(execFile)(process.execPath, [SIMULATOR, '--url', server.base.href, '--api-key', API_KEY, '--devices', '1', '--chunks', '12', '--id-prefix', '5e5e5e5e'], { timeout: 60_000 })
    t.match(sim.stdout + sim.stderr, /12/, 'the simulator sent its chunks')
    await page.waitForSelector('a[href="#/devices/5e5e5e5e00000000"]', { timeout: 10_000 })
    t.pass('a simulated device appears live')
    await page.screenshot({ path: join(shots, 'devices.png'), fullPage: true })

    await page.click(`a[href="#/devices/${SENSOR}"]`)
    await page.waitForSelector('.faults td')
    t.match(await page.textContent('.faults'), /sensor_poll at \/src\/main\.c:42/, 'the fault shows its symbol')
    t.same(await page.locator('.faults ol.backtrace li').allTextContents(), ['0x0800abcc sensor_poll at /src/main.c:42', '0x08000122 sensor_task at /src/main.c:57'], 'and its backtrace')
    t.same(await page.locator('.faults .backtrace-note').allTextContents(), [
      'The stack snapshot ends here: callers beyond it were not sent.',
      'Found by scanning the stack (the ELF has no call-frame information): a frame may be stale, a tail call missing.'
    ], 'saying where the snapshot ended and that scanning found it')
    // The traces load apart from the faults: wait for them rather than read what is there yet.
    await page.locator('.traces', { hasText: 'radio up' }).waitFor({ timeout: 10_000 })
    t.pass('the trace text is shown')
    await page.waitForSelector('.chart canvas')
    t.pass('the metric is drawn')
    await page.screenshot({ path: join(shots, 'device.png'), fullPage: true })

    await page.goto(new URL('/dashboard/#/issues', server.base).href)
    await page.waitForSelector('table.issues tbody tr')
    t.equal(await page.locator('table.issues tbody tr').count(), 2, 'two crash issues: the sensor\'s and the simulated fleet\'s')
    t.match(await page.textContent('table.issues tbody'), /in sensor_poll \(from sensor_task\)/, 'one named by the top two frames of its symbolicated fault')
    t.match(await page.textContent('table.issues tbody'), / at 0x0800abcc \(build /, 'one by its PC, not symbolicated')
    await page.click('table.issues tbody tr:has-text("in sensor_poll") a')
    await page.waitForSelector('[data-testid="issue-faults"] tbody tr')
    const { issues: [sensorIssue] } = await (await server.api('GET', '/issues?q=sensor_poll', 'viewer')).json() as { issues: Array<{ count: number }> }
    t.equal(await page.textContent('[data-testid="issue-count"]'), String(sensorIssue.count), 'its count, as the API gives it')
    t.equal(await page.getAttribute('[data-testid="issue-chart"]', 'data-total'), String(sensorIssue.count), 'the chart counts every fault of it')
    t.match(await page.textContent('[data-testid="issue-faults"] ol.backtrace'), /sensor_poll at \/src\/main\.c:42.*sensor_task at \/src\/main\.c:57/, 'its faults with their backtraces')
    t.match(await page.textContent('[data-testid="issue-faults"]'), /[A-Z]+: /, 'with its status registers in words')
    t.equal(await page.locator('[data-testid="issue-actions"]').count(), 0, 'a viewer cannot change its status')
    await page.screenshot({ path: join(shots, 'issue.png'), fullPage: true })

    await page.goto(new URL(`/dashboard/#/devices/${SENSOR}`, server.base).href)
    await page.waitForSelector('ol.timeline li.fault')
    t.match(await page.textContent('ol.timeline'), /fault: PRECISERR at 0x0800abcc in sensor_poll at \/src\/main\.c:42/, 'the device\'s timeline')
    t.match(await page.textContent('ol.timeline li.heartbeat'), /heartbeat: up 2h 5m \(boot 3\)/, 'with its heartbeats')
    await page.selectOption('select[name="timeline-span"]', '1')
    await pollUntil(async () => (await page.locator('ol.timeline li').count()) === chunks.length - 4, { what: 'the last hour\'s entries' })
    t.pass('a span chosen reads the timeline again from then')
    await page.goto(new URL('/dashboard/#/devices', server.base).href)
    await page.selectOption('select[name="sort"]', 'fault_count')
    await page.fill('input[name="metric"]', 'battery_mv')
    await pollUntil(async () => await page.locator('table.devices td.metric-value:text("3630")').count() === 1, { what: 'the metric column' })
    t.ok(await page.locator('table.devices th:text("Faults")').count() === 1, 'sorted by faults, with a battery_mv column')
    await page.goto(new URL('/dashboard/#/fleet-metrics', server.base).href)
    await pollUntil(async () => Number(await page.getAttribute('[data-testid="fleet-bands"]', 'data-buckets') ?? 0) > 0, { what: 'the fleet bands' })
    await pollUntil(async () => await page.locator('[data-testid="fleet-bands"] canvas').count() > 0, { what: 'the fleet bands\' chart' })
    t.pass('battery_mv across the fleet, drawn')
    t.equal((await server.api('POST', '/alerts/rules', 'provisioner', { name: 'any crash', condition: { kind: 'crash_rate', per_hour: 1 } })).status, 201)
    await server.service.evaluateAlerts()
    await page.goto(new URL('/dashboard/#/alerts', server.base).href)
    await page.waitForSelector('table.alert-history td:text("any crash")')
    t.pass('the alert history')
    await page.goto(new URL('/dashboard/#/firmware', server.base).href)
    await page.waitForSelector('table.missing-symbols tr')
    t.match(await page.textContent('table.missing-symbols'), /main 2\.1\.0.*no build id reported/, 'the builds without symbols, shown to a viewer too')
    await page.goto(new URL('/dashboard/#/releases', server.base).href)
    await page.waitForSelector('table.releases', { state: 'attached' })
    t.equal(await page.locator('form.new-release').count(), 0, 'a viewer cannot release')

    await page.goto(new URL('/dashboard/#/groups', server.base).href)
    await page.waitForSelector('.groups', { state: 'attached' })
    t.equal(await page.locator('form.new-group').count(), 0, 'a viewer sees no form to create a group')
    t.equal((await server.api('POST', '/groups', 'viewer', { name: 'north' })).status, 403, 'and the API refuses a viewer')
    await page.goto(new URL('/dashboard/#/ota', server.base).href)
    await page.waitForSelector('table.ota')
    t.equal(await page.locator('form.new-ota').count(), 0, 'nor one for OTA targets')
    t.equal(await page.locator('form.edit').count(), 0, 'nor any to edit')
    await page.goto(new URL('/dashboard/#/firmware', server.base).href)
    t.match(await page.textContent('main section'), /needs the provisioner role/)
    // The offline check marks a silent device; the alerts view lists it.
    await storage.changeDevice(newcomer, quiet => quiet === undefined ? undefined : { device: { ...quiet, offline: true } })
    await page.goto(new URL('/dashboard/#/alerts', server.base).href)
    await page.waitForSelector(`table.alerts a[href="#/devices/${newcomer}"]`)
    t.equal(await page.locator('table.alerts tr').count(), 1, 'the offline device is listed')
    await page.click('nav button')
    await signIn(page, server.base, 'provisioner', passwordOf('provisioner'))
    await page.goto(new URL('/dashboard/#/issues', server.base).href)
    await page.click('table.issues tbody tr:has-text("in sensor_poll") a')
    await page.click('[data-testid="issue-actions"] button:text("Resolve")')
    await pollUntil(async () => await page.textContent('[data-testid="issue-status"]') === 'resolved', { what: 'the issue resolved' })
    const { issues } = await (await server.api('GET', '/issues?status=resolved', 'viewer')).json() as { issues: Array<{ status_changed_by: string }> }
    t.same(issues.map(i => i.status_changed_by), ['provisioner'], 'a provisioner resolves an issue')

    const image = await fetch(new URL('/ota/images?software_type=main&version=2.2.0', server.base), { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`provisioner:${passwordOf('provisioner')}`).toString('base64')}`, 'content-type': 'application/octet-stream' }, body: Buffer.from('an image') })
    t.equal(image.status, 201)
    await page.goto(new URL('/dashboard/#/releases', server.base).href)
    await page.waitForSelector('form.new-release select[name="image"] option:text("main 2.2.0 (8 bytes)")', { state: 'attached' })
    await page.selectOption('form.new-release select[name="image"]', { label: 'main 2.2.0 (8 bytes)' })
    await page.click('form.new-release button')
    await page.waitForSelector('table.releases tbody tr td:text("10% (1 of 3)")')
    await page.click('table.releases tbody tr button:text("Pause")')
    await page.waitForSelector('table.releases td.state.paused')
    t.pass('a provisioner releases an image in stages and pauses it')

    await page.goto(new URL('/dashboard/#/groups', server.base).href)
    await page.waitForSelector('form.new-group')
    await page.fill('form.new-group input', 'north')
    await page.click('form.new-group button')
    await page.waitForSelector('.groups td:text("north")')
    t.pass('a provisioner creates a group')

    t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: SENSOR, group: 'north' })).status, 200)
    await page.goto(new URL('/dashboard/#/devices', server.base).href)
    await page.waitForSelector(`a[href="#/devices/${newcomer}"]`)
    await page.selectOption('select[name="group"]', 'north')
    await pollUntil(async () => await page.locator('table.devices tbody tr').count() === 1, { what: 'the group filter' })
    t.match(await page.textContent('table.devices tbody'), SENSOR, 'filtered by group')
    await page.selectOption('select[name="group"]', '')
    await page.fill('input[name="firmware"]', '9.9.9')
    await pollUntil(async () => await page.locator('table.devices tbody tr').count() === 0, { what: 'the firmware filter' })
    t.pass('filtered by firmware version')

    await page.goto(new URL('/dashboard/#/ota', server.base).href)
    await page.fill('form.new-ota input[name="version"]', '2.2.0')
    await page.fill('form.new-ota input[name="group"]', 'north')
    await page.click('form.new-ota button')
    await page.waitForSelector('table.ota form.edit input[name="version"]')
    t.equal(await page.inputValue('table.ota form.edit input[name="version"]'), '2.2.0')
    t.equal(await page.locator('table.ota button:text("Delete")').count(), 0, 'a provisioner creates OTA targets, and deletes none')
    await page.fill('table.ota form.edit input', '2.2.1')
    await page.click('table.ota form.edit button')
    await pollUntil(async () => { const { targets } = await (await server.api('GET', '/ota/targets', 'viewer')).json() as { targets: Array<{ version: string }> }; return targets[0]?.version === '2.2.1' }, { what: 'the OTA target edited' })
    t.pass('and edits them')
    await page.goto(new URL('/dashboard/#/groups', server.base).href)
    await page.waitForSelector('table.groups form.edit')
    await page.fill('table.groups form.edit input', 'Northern sites')
    await page.click('table.groups form.edit button')
    await pollUntil(async () => { const { groups } = await (await server.api('GET', '/groups', 'viewer')).json() as { groups: Array<{ description: string }> }; return groups[0]?.description === 'Northern sites' }, { what: 'the group edited' })
    t.pass('a provisioner edits a group\'s description')

    await page.goto(new URL('/dashboard/#/firmware', server.base).href)
    await page.setInputFiles('form.elf input[type="file"]', '/bin/true')
    await page.click('form.elf button')
    await page.waitForSelector('form.elf ~ .error')
    t.match(await page.textContent('form.elf ~ .error'), /not an ARM image/, 'a host binary is refused with the reason')
    // The smallest ARM image: an ELF32 little-endian header, machine 40, no sections.
    const arm = Buffer.alloc(52)
    arm.set([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1])
    arm.writeUInt16LE(2, 16)
    arm.writeUInt16LE(40, 18)
    arm.writeUInt32LE(1, 20)
    await page.setInputFiles('form.elf input[type="file"]', { name: 'fw.elf', mimeType: 'application/octet-stream', buffer: arm })
    await page.fill('form.elf input[name="software_version"]', '2.2.0')
    await page.click('form.elf button')
    await page.waitForSelector('form.elf ~ .result')
    t.match(await page.textContent('form.elf ~ .result'), /^uploaded: build [0-9a-f]+, 52 bytes/, 'an ARM image is uploaded')

    // A fleet of 10,000: the list shows its first page and pages on (the time is reported, and
    // measured for the API in bench/telemetry-api.ts).
    const at = Date.now()
    const model = await storage.device(SENSOR) as Device
    for (let from = 0; from < 10_000; from += 500) {
      const fleet = Array.from({ length: 500 }, (_, i): Device => {
        const n = from + i
        return { ...model, id: `f${n.toString(16).padStart(15, '0')}`, name: `fleet ${n}`, group: null, last_seen: at }
      })
      await storage.ingest(fleet.map(device => device.id), async session => { await session.write({ ...emptyWrites(), devices: fleet }) })
    }
    const began = Date.now()
    await page.goto(new URL('/dashboard/#/devices', server.base).href)
    await pollUntil(async () => await page.locator('table.devices tbody tr').count() === 50, { what: 'the first page of 10,000 devices' })
    t.comment(`10,000 devices: the first page shown ${Date.now() - began} ms after navigation`)
    await page.click('.pages button:text("Next")')
    await page.waitForSelector('table.devices a[href="#/devices/f000000000000031"]')
    t.pass('the next page follows the cursor')
  })

  t.test('a fault\'s coredump on the device\'s page: what it holds, opened into its globals and regions', async t => {
    await builtDashboard()
    const server = await telemetryServer(t)
    const crashed = (build: string, counter: number): ChunkPayload[] => [
      { type: 'DeviceInfo', record: { ...(info.record as object), build_id: build } } as ChunkPayload,
      { type: 'FaultRecord', record: { ...(fault.record as FaultRecord), stack: Buffer.alloc(0), coredump: [{ address: counter, data: Buffer.from([42, 0, 0, 0]) }], coredump_truncated: 12 } }
    ]
    // With the ELF of its build (arm-none-eabi-gcc's, when installed), the global in the region is named.
    const compiler = await armToolchain().catch(() => undefined)
    let named: { build: string, counter: number } | undefined
    if (compiler !== undefined) {
      const elf = await buildGlobalsElf(compiler, tempDir(t, 'berth-dashboard-elf-'))
      const response = await fetch(new URL('/ingest/elf', server.base), { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': API_KEY }, body: elf.bytes })
      named = { build: ((await response.json()) as { build_id: string }).build_id, counter: objectSymbols(elf.bytes).find(s => s.name === 'g_counter')?.address as number }
    }
    const [device, payload] = crashed(named?.build ?? '', named?.counter ?? 0x20000100)
    t.equal((await server.ingest(Buffer.concat([device, payload].map((p, sequence) => encodeChunk({ device: SENSOR, sequence, payload: p }))))).json.accepted, 2, 'the device info and its fault are taken')
    const context = await headlessBrowser(t, executablePath)
    const page = await context.newPage()
    await signIn(page, server.base, 'viewer', passwordOf('viewer'))
    await page.waitForSelector('.me')
    await page.goto(new URL(`/dashboard/#/devices/${SENSOR}`, server.base).href)
    await page.waitForSelector('.faults details.coredump summary')
    t.equal(await page.textContent('.faults details.coredump summary'), 'Coredump: 1 regions, 4 bytes (12 bytes cut on the device)', 'the fault says what its coredump holds')
    await page.click('.faults details.coredump summary')
    await page.waitForSelector('.coredump-regions li')
    const at = `0x${(named?.counter ?? 0x20000100).toString(16).padStart(8, '0')}`
    t.same(await page.locator('.coredump-regions li').allTextContents(), [`${at} 4 bytes: 2a000000`], 'opened: its regions')
    if (named === undefined) {
      t.equal(await page.textContent('.faults .coredump-note'), 'No globals named: the device reported no build id.', 'and why no globals are named')
      return
    }
    t.same(await page.locator('.coredump-globals tbody td').allTextContents(), ['g_counter', at, '4', '42'],
      'and the global inside it, named from the ELF, with its value')
  })

  t.test('a device\'s chart spans the range the page asks for, and a hole in a series is a gap', async t => {
    await builtDashboard()
    const server = await telemetryServer(t)
    const shots = process.env.BERTH_SCREENSHOTS ?? tempDir(t, 'berth-dashboard-shots-')
    mkdirSync(shots, { recursive: true })
    const lone = 'a1b2c3d4e5f60003'
    const holed = 'a1b2c3d4e5f60004'
    for (const device of [lone, holed]) t.equal((await server.ingest(encodeChunk({ device, sequence: 0, payload: info }))).json.accepted, 1)
    // Samples in the past, written as the ingest path writes them (plugins/ingest/apply.ts): a chunk
    // is stamped when it arrives, so none can be sent with an earlier time.
    const { storage } = server.service.telemetry
    const sample = async (device: string, at: number, sequence: number, value: number): Promise<void> => {
      const metric: StoredMetric = { device, sequence, received_at: at, key: 'battery_mv', kind: 'gauge', value, uptime_ms: sequence }
      await storage.ingest([device], async session => { await session.write({ ...emptyWrites(), metrics: [{ metric, index: 0 }] }) })
    }
    const began = Date.now()
    const single = began - 6 * HOUR
    await sample(lone, single, 1, 3700)
    // One every five minutes from 12 to 8 hours ago and from 4 hours ago on, and one alone 6 hours ago:
    // a hole of four hours with a sample in its middle.
    for (let n = 0; n <= 144; n++) {
      const at = began - 12 * HOUR + n * 5 * 60_000
      if (at <= began - 8 * HOUR || at >= began - 4 * HOUR || at === began - 6 * HOUR) await sample(holed, at, n + 1, 3600 + (n % 12) * 5)
    }

    const context = await headlessBrowser(t, executablePath)
    const page = await context.newPage()
    await signIn(page, server.base, 'viewer', passwordOf('viewer'))
    await page.waitForSelector('.me')
    await page.goto(new URL(`/dashboard/#/devices/${lone}`, server.base).href)
    let chart = await readChart(page)
    t.equal(chart.to - chart.from, DAY, 'one sample: the x axis spans the 24 hours asked for, not the sample\'s extent')
    t.ok(chart.to >= began && chart.to <= Date.now(), 'ending when the page asked')
    t.equal(chart.x.length, 1)
    t.ok(single - chart.x[0] >= 0 && single - chart.x[0] < DAY / 200, 'the point is the bucket of the sample')
    chart = await readChart(page, [chart.x[0], chart.from, chart.to])
    t.ok(Math.abs(chart.columns[0].across - 0.75) < 0.01, `the dot is drawn three quarters across (${chart.columns[0].across.toFixed(3)})`)
    t.ok(chart.columns[0].inked, 'and is there')
    t.notOk(chart.columns[1].inked || chart.columns[2].inked, 'nothing is drawn at either edge')
    await page.screenshot({ path: join(shots, 'device-one-sample.png'), fullPage: true })
    const over = await page.locator('.chart .u-over').boundingBox()
    if (over === null) throw new Error('the chart has no plot area')
    await page.mouse.move(over.x + over.width * 0.25, over.y + over.height / 2)
    await page.mouse.down()
    await page.mouse.move(over.x + over.width * 0.5, over.y + over.height / 2, { steps: 5 })
    await page.mouse.up()
    chart = await pollUntil(async () => { const c = await readChart(page); return c.to - c.from < DAY && c }, { what: 'the zoom' })
    t.ok(Math.abs((chart.to - chart.from) / DAY - 0.25) < 0.02, 'dragging across a quarter of the plot zooms into it')
    await page.dblclick('.chart .u-over')
    chart = await pollUntil(async () => { const c = await readChart(page); return c.to - c.from === DAY && c }, { what: 'the range again' })
    t.pass('a double click goes back to the range, not to the data\'s extent')
    await page.selectOption('select[name="range"]', String(7 * DAY))
    chart = await pollUntil(async () => { const c = await readChart(page); return c.to - c.from === 7 * DAY && c }, { what: 'the 7-day range' })
    t.pass('the range selector asks for 7 days, and the axis spans them')
    chart = await readChart(page, [chart.x[0]])
    t.ok(chart.columns[0].inked && Math.abs(chart.columns[0].across - (1 - 6 * HOUR / (7 * DAY))) < 0.01, 'with the dot inside, near the right')
    await page.selectOption('select[name="range"]', String(HOUR))
    chart = await pollUntil(async () => { const c = await readChart(page); return c.to - c.from === HOUR && c }, { what: 'the 1-hour range' })
    t.equal(chart.x.length, 0, 'the last hour has no sample: an empty chart over that hour')
    t.match(await page.textContent('.empty'), 'No samples of battery_mv in this range')

    // The next device's page first reads the range chosen last (1 h); that answer is held back until
    // the 24-hour one has been delivered: the late answer must not replace the newer chart.
    let dayDelivered = false
    let staleDelivered = false
    await page.route(`**/devices/${holed}/metrics/points?*`, async route => {
      const query = new URL(route.request().url()).searchParams
      const span = Number(query.get('to')) - Number(query.get('from'))
      if (span === HOUR) await pollUntil(() => dayDelivered, { what: 'the 24-hour answer before the 1-hour one' })
      await route.fulfill({ response: await route.fetch() })
      if (span === HOUR) staleDelivered = true
      else dayDelivered = true
    })
    await page.goto(new URL(`/dashboard/#/devices/${holed}`, server.base).href)
    await page.selectOption('select[name="range"]', String(DAY))
    await pollUntil(() => staleDelivered, { what: 'the 1-hour answer, delivered late' })
    chart = await pollUntil(async () => { const c = await readChart(page); return c.to - c.from === DAY && c.x.length > 1 && c }, { what: 'the chart of the series with a hole' })
    t.pass('an answer arriving after a newer one is dropped: the chart keeps the range chosen last')
    await page.unroute(`**/devices/${holed}/metrics/points?*`)
    const nulls = chart.avg.flatMap((v, i) => v === null ? [i] : [])
    t.equal(nulls.length, 2, 'two gaps in the data given to uPlot: before and after the sample in the hole')
    t.ok(chart.x[nulls[0]] > began - 8 * HOUR && chart.x[nulls[0]] < began - 6 * HOUR && chart.x[nulls[1]] > began - 6 * HOUR && chart.x[nulls[1]] < began - 4 * HOUR, 'both within the hole')
    t.equal(nulls[1] - nulls[0], 2, 'with the sample between them')
    const alone = chart.x[nulls[0] + 1]
    chart = await readChart(page, [began - 10 * HOUR, began - 7 * HOUR, alone, began - 5 * HOUR, began - 2 * HOUR])
    t.same(chart.columns.map(c => c.inked), [true, false, true, false, true], 'the line is drawn before and after the hole and not across it, the sample in it as a dot')
    await page.screenshot({ path: join(shots, 'device-gap.png'), fullPage: true })
  })

  t.test('single sign-on: authorization code with PKCE against the embedded development provider, as each fleet role', async t => {
    await builtDashboard()
    const { logger, lines } = capturedLogger('info')
    const kernel = await testKernel(t, { plugins: [devIdp, ingest], logger, config: { ingest: { api_key: API_KEY, ...await backendSettings(t), sso: { dev_idp: true } } } })
    const dashboard = new URL('/dashboard/', kernel.url('telemetry')).href
    const mode = await (await fetch(new URL('/auth/mode', dashboard))).json() as { mode: string, issuer: string }
    t.match(mode, { mode: 'sso', realm: 'fleet', client_id: 'dashboard', issuer: /^http:\/\/127\.0\.0\.1:\d+\/realms\/fleet$/ }, 'sso.dev_idp: SSO mode at the embedded provider')
    const kept = readFileSync(join(kernel.config.stateDir, 'telemetry-dev-idp-passwords'), 'utf8')
    const users = [...kept.matchAll(/^(\w+) (\S+)$/gm)].map(m => ({ username: m[1], password: m[2] }))
    t.same(users.map(u => u.username), ['admin', 'provisioner', 'viewer'], 'one user per fleet role, its password kept in the state directory')
    for (const user of users) t.notMatch(lines(), user.password, `${user.username}'s password is not logged`)
    for (const user of users) {
      const context = await headlessBrowser(t, executablePath)
      const page = await context.newPage()
      await page.goto(dashboard)
      await page.click('button.sso')
      await page.waitForSelector('input[name="username"]')
      t.match(page.url(), `${mode.issuer}/`, 'at the provider\'s sign-in page')
      await page.fill('input[name="username"]', user.username)
      await page.fill('input[name="password"]', user.password)
      await page.click('button[type="submit"]')
      await page.waitForSelector('.me')
      t.match(await page.textContent('.me'), `(${user.username})`, `signed in through PKCE as ${user.username}`)
      t.equal(page.url(), dashboard, 'the code is gone from the address')
      await page.goto(`${dashboard}#/groups`)
      await page.waitForSelector('.groups', { state: 'attached' })
      t.equal(await page.locator('form.new-group').count(), user.username === 'viewer' ? 0 : 1, `${user.username}: the group form ${user.username === 'viewer' ? 'hidden' : 'shown'}`)
    }
  })
}
