// Backups against a real Docker engine, a real S3-compatible server on loopback (s3rver, which does
// not check signatures) with Debian's rclone, and local disk: data written into a volume, a
// snapshot taken through the CLI (the hook first; a failing hook skips its service), old snapshots
// pruned, the volume destroyed and restored from each target byte for byte, a damaged archive
// refused, the roles, and the schedule's refusal of a five-field expression shown in health; a run
// that fails or skips a service logged at error, counted and alerted per target, and the last
// complete snapshot per target as metrics that survive a restart.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import backup from '../../../plugins/backup/index.js'
import type { OperatorAlert } from '../../../kernel/index.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine } from '../../support/docker.js'
import { capturedLogger } from '../../support/kernel.js'
import { api, reconcilerKernel, tokenFor, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { s3Server } from '../../support/s3.js'
import { tempDir } from '../../support/tmp.js'

const docker = await requireComponent(t, 'docker', dockerEngine)
const s3 = docker === undefined ? undefined : await requireComponent(t, 's3', async () => await s3Server(t, 'berth-backups'))

if (docker !== undefined && s3 !== undefined) {
  t.test('a volume backed up to local disk and S3, destroyed, and restored from each byte for byte', async t => {
    const image = await busyboxImage(docker)
    const local = tempDir(t)
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker, {
      plugins: [backup],
      sections: {
        backup: {
          enabled: true,
          schedule: '0 3 * * *',
          retention_days: 30,
          targets: [
            { type: 'local', name: 'disk', path: local },
            { type: 's3', name: 'bucket', endpoint: s3.endpoint, bucket: s3.bucket, prefix: 'prod', access_key: '${secrets.S3_KEY}', secret_key: '${secrets.S3_SECRET}' }
          ]
        }
      }
    })
    const health = await api<{ plugins: Record<string, { details?: Record<string, unknown> }> }>(kernel, 'GET', '/api/v1/health')
    t.match(health.body.plugins.backup.details, { schedule: /^off: \[backup\]\.schedule "0 3 \* \* \*": .*six/ }, 'a five-field schedule: the scheduler does not start, and health says why')

    const sleeper = 'exec /bin/busybox sleep 3600'
    writeServices(cwd, {
      [project]: [
        `[[service]]\nname = "db"\nimage = "${image}"\ncommand = ["/bin/busybox", "sh", "-c", "${sleeper}"]\n[[service.volumes]]\nsource = "data"\ntarget = "/data"\n[service.backup]\npre_hook = "echo dumped-by-hook > /data/dump.sql"\n`,
        `[[service]]\nname = "broken"\nimage = "${image}"\ncommand = ["/bin/busybox", "sh", "-c", "${sleeper}"]\n[[service.volumes]]\nsource = "state"\ntarget = "/state"\n[service.backup]\npre_hook = "echo no database here >&2; exit 3"\n`
      ].join('\n')
    })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    const volume = `${project}_data`
    const mountpoint = async (): Promise<string> => ((await docker.getVolume(volume).inspect()) as unknown as { Mountpoint: string }).Mountpoint
    const payload = randomBytes(300_000)
    mkdirSync(join(await mountpoint(), 'nested'), { recursive: true })
    writeFileSync(join(await mountpoint(), 'nested', 'blob.bin'), payload)

    for (const [name, value] of [['S3_KEY', 'S3RVER'], ['S3_SECRET', 'S3RVER-secret-value']]) {
      t.equal((await api(kernel, 'PUT', `/api/v1/secrets/${name}`, { token, body: { value } })).status, 201)
    }
    mkdirSync(join(local, '20200101T000000000Z'), { recursive: true })
    writeFileSync(join(local, '20200101T000000000Z', 'manifest.json'), '{}')

    const viewer = await tokenFor(kernel, 'viewer')
    t.equal((await api(kernel, 'POST', '/api/v1/backups', { token: viewer })).status, 403, 'a viewer cannot take a backup')
    t.equal((await api(kernel, 'POST', '/api/v1/backups/restore', { token: viewer, body: { name: 'db' } })).status, 403, 'nor restore one')

    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
    const all = await runCli(['backup', 'all'], { env, timeout: 120_000 })
    t.equal(all.code, 1, 'a skipped service makes the run fail')
    t.match(all.stdout, /^ {2}hook {2}broken: echo no database here/m)
    t.match(all.stdout, /^ {2}skipped {2}broken: pre_hook exited with 3: no database here$/m, 'the failing hook is reported with its output')
    t.match(all.stdout, new RegExp(`^ {2}volume {2}${volume}$`, 'm'))
    t.notMatch(all.stdout, `volume  ${project}_state`, 'the volume of the service whose hook failed is not archived')
    t.match(all.stdout, /^ {2}disk {2}written, pruned 20200101T000000000Z$/m, 'a snapshot older than the retention is pruned')
    t.match(all.stdout, /^ {2}bucket {2}written$/m)
    const snapshot = /^snapshot (\d{8}T\d{9}Z): 1 volumes, \d+ bytes, 2\/2 targets$/m.exec(all.stdout)?.[1] ?? ''
    t.ok(snapshot !== '', all.stdout + all.stderr)
    t.same(readdirSync(local), [snapshot])
    const manifest = JSON.parse(readFileSync(join(local, snapshot, 'manifest.json'), 'utf8')) as { volumes: Array<{ volume: string, sha256: string }>, state: Array<{ plugin: string, file: string, sha256: string }> }
    t.match(manifest.volumes, [{ volume, service: 'db' }])
    t.same(manifest.state.map(s => s.plugin), ['backup', 'reconciler', 'secrets', 'tokens'], 'every plugin with databases has its state in the snapshot')
    t.match(all.stdout, /^ {2}state {2}reconciler$/m)
    t.equal(readFileSync(join(local, snapshot, 'SHA256SUMS'), 'utf8'),
      [`${manifest.volumes[0].sha256}  volumes/${volume}.tar.gz`, ...manifest.state.map(s => `${s.sha256}  ${s.file}`)].join('\n') + '\n')
    t.ok(existsSync(join(s3.directory, s3.bucket)), 'objects were written to the S3 server')

    const list = await runCli(['backup', 'list'], { env })
    t.match(list.stdout, new RegExp(`disk\\s+${snapshot}\\s+\\S+\\s+${volume}`))
    t.match(list.stdout, new RegExp(`bucket\\s+${snapshot}\\s+\\S+\\s+${volume}`))

    // Destroy the service and its volume, deploy it again (an empty volume), and restore.
    const destroy = async (): Promise<void> => {
      t.equal((await api(kernel, 'DELETE', '/api/v1/services/db', { token })).status, 200)
      await docker.getVolume(volume).remove()
      t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
      t.notOk(existsSync(join(await mountpoint(), 'nested', 'blob.bin')), 'the data is gone')
    }
    await destroy()
    const fromDisk = await runCli(['backup', 'restore', 'db', '--target', 'disk'], { env })
    t.equal(fromDisk.stdout, `restored ${volume} from snapshot ${snapshot} on disk\n`, fromDisk.stderr)
    t.same(readFileSync(join(await mountpoint(), 'nested', 'blob.bin')), payload, 'restored from local disk, byte for byte')
    t.equal(readFileSync(join(await mountpoint(), 'dump.sql'), 'utf8'), 'dumped-by-hook\n', 'with what the hook dumped')
    await pollUntil(async () => (await api<{ services: Array<{ name: string, running_replicas: number }> }>(kernel, 'GET', '/api/v1/status', { token })).body.services.find(s => s.name === 'db')?.running_replicas === 1, { what: 'db running again' })

    await destroy()
    const fromS3 = await runCli(['backup', 'restore', volume, snapshot, '--target', 'bucket'], { env })
    t.equal(fromS3.stdout, `restored ${volume} from snapshot ${snapshot} on bucket\n`, fromS3.stderr)
    t.same(readFileSync(join(await mountpoint(), 'nested', 'blob.bin')), payload, 'restored from S3, byte for byte')

    // A damaged archive is refused; unknown names and snapshots are clear errors.
    const archive = join(local, snapshot, 'volumes', `${volume}.tar.gz`)
    const bytes = readFileSync(archive)
    bytes[bytes.length - 10] ^= 0xff
    writeFileSync(archive, bytes)
    const damaged = await runCli(['backup', 'restore', 'db', '--target', 'disk'], { env })
    t.same([damaged.code, damaged.stderr.replace(/SHA-256 \w+, the manifest says \w+/, 'SHA-256 …')], [1, `berth: volumes/${volume}.tar.gz of snapshot ${snapshot} on disk is damaged: SHA-256 …\n`])
    t.same(readFileSync(join(await mountpoint(), 'nested', 'blob.bin')), payload, 'nothing was unpacked from it')
    const unknown = await runCli(['backup', 'restore', 'nothing', '--target', 'disk'], { env })
    t.same([unknown.code, unknown.stderr], [1, 'berth: no snapshot on disk holds nothing\n'])
    const badId = await runCli(['backup', 'restore', 'db', 'yesterday'], { env })
    t.same([badId.code, badId.stderr], [2, 'berth: snapshot yesterday: expected an id like 20261123T030000000Z (see berth backup list)\n'])
  })

  t.test('a run that fails or skips a service is logged at error, counted and alerted per target; the last complete snapshot per target is a metric that survives a restart', async t => {
    const image = await busyboxImage(docker)
    const local = tempDir(t)
    const blocker = join(tempDir(t), 'a-file')
    writeFileSync(blocker, 'not a directory')
    const { logger, lines } = capturedLogger()
    const sections = {
      backup: {
        targets: [
          { type: 'local', name: 'disk', path: local },
          { type: 's3', name: 'bucket', endpoint: s3.endpoint, bucket: s3.bucket, prefix: 'observed', access_key: '${secrets.S3_KEY}', secret_key: '${secrets.S3_SECRET}' },
          { type: 'local', name: 'jammed', path: join(blocker, 'backups') }
        ]
      }
    }
    const first = await reconcilerKernel(t, docker, { plugins: [backup], logger, sections })
    const { kernel, cwd, project, token } = first
    const alerts: OperatorAlert[] = []
    kernel.events.on('operator.alert', alert => { alerts.push(alert) })
    writeServices(cwd, { [project]: `[[service]]\nname = "db"\nimage = "${image}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n[[service.volumes]]\nsource = "data"\ntarget = "/data"\n[service.backup]\npre_hook = "test ! -e /data/fail-hook && echo dumped > /data/dump.sql"\n` })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    for (const [name, value] of [['S3_KEY', 'S3RVER'], ['S3_SECRET', 'S3RVER-secret-value']]) {
      t.equal((await api(kernel, 'PUT', `/api/v1/secrets/${name}`, { token, body: { value } })).status, 201)
    }
    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
    const metrics = async (of = kernel): Promise<string> => await (await fetch(new URL('/metrics', of.url('control')))).text()
    const metric = (text: string, name: string, labels: string): number | undefined => {
      const value = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]
      return value === undefined ? undefined : Number(value)
    }
    const errors = (): Array<Record<string, unknown>> => lines().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(entry => entry.level === 50)

    // One target fails: the two others hold the snapshot, and say so in the metrics.
    const started = Date.now()
    const partly = await runCli(['backup', 'all'], { env, timeout: 120_000 })
    t.equal(partly.code, 1, 'a failed target fails the command')
    const snapshot = /^snapshot (\d{8}T\d{9}Z):/m.exec(partly.stdout)?.[1] ?? ''
    const manifest = JSON.parse(readFileSync(join(local, snapshot, 'manifest.json'), 'utf8')) as { volumes: Array<{ bytes: number }>, state: Array<{ bytes: number }> }
    const size = [...manifest.volumes, ...manifest.state].reduce((n, entry) => n + entry.bytes, 0)
    let text = await metrics()
    for (const target of ['disk', 'bucket']) {
      const at = metric(text, 'berth_backup_last_success_timestamp_seconds', `target="${target}"`) ?? 0
      t.ok(at * 1000 >= started - 1000 && at * 1000 <= Date.now(), `${target}: when its last complete snapshot was written`)
      t.equal(metric(text, 'berth_backup_last_success_bytes', `target="${target}"`), size, `${target}: its bytes (archives and state files)`)
      t.ok((metric(text, 'berth_backup_last_success_duration_seconds', `target="${target}"`) ?? 0) > 0, `${target}: how long the run took`)
    }
    t.equal(metric(text, 'berth_backup_last_success_timestamp_seconds', 'target="jammed"'), undefined, 'the failed target has no success')
    t.equal(metric(text, 'berth_backup_failures_total', 'target="jammed",reason="target"'), 1)
    t.match(alerts, [{ kind: 'backup.failed', subject: 'jammed', message: /^backup to target jammed failed: local target jammed: writing in .*a-file\/backups failed: ENOTDIR$/, at: Number, details: { reason: 'target', snapshot } }])
    t.equal(alerts.length, 1, 'one alert: the failed target')
    t.match(errors(), [{ plugin: 'backup', msg: 'backup finished with failures: not every target holds a complete snapshot', snapshot, targets: [{ name: 'disk', ok: true }, { name: 'bucket', ok: true }, { name: 'jammed', ok: false }] }])
    const firstAt = metric(text, 'berth_backup_last_success_timestamp_seconds', 'target="disk"')

    // The hook fails: every target gets a snapshot without the service, which is no success.
    const mountpoint = ((await docker.getVolume(`${project}_data`).inspect()) as unknown as { Mountpoint: string }).Mountpoint
    writeFileSync(join(mountpoint, 'fail-hook'), '')
    alerts.length = 0
    t.equal((await runCli(['backup', 'all'], { env, timeout: 120_000 })).code, 1)
    t.match(alerts.map(a => [a.subject, a.details?.reason]), [['disk', 'skipped'], ['bucket', 'skipped'], ['jammed', 'target']])
    t.match(alerts[0].message, /^snapshot \d{8}T\d{9}Z on target disk lacks db: db \(pre_hook exited with 1: \)$/)
    text = await metrics()
    t.equal(metric(text, 'berth_backup_last_success_timestamp_seconds', 'target="disk"'), firstAt, 'the last complete snapshot is still the first')
    t.equal(metric(text, 'berth_backup_failures_total', 'target="disk",reason="skipped"'), 1)
    t.equal(metric(text, 'berth_backup_failures_total', 'target="jammed",reason="target"'), 2)
    t.equal(errors().length, 2, 'logged at error')

    // The run itself fails (the S3 target's secret is gone): every target missed it.
    t.equal((await api(kernel, 'DELETE', '/api/v1/secrets/S3_SECRET', { token })).status, 200)
    alerts.length = 0
    const broken = await runCli(['backup', 'all'], { env, timeout: 60_000 })
    t.same([broken.code, broken.stderr], [1, 'berth: service "backup target bucket": env.secret_key refers to unknown secret "S3_SECRET" (set it with: berth secrets set S3_SECRET <value>)\n'])
    t.match(alerts, ['disk', 'bucket', 'jammed'].map(subject => ({ kind: 'backup.failed', subject, message: `backup run failed before reaching target ${subject}: ${broken.stderr.slice('berth: '.length).trim()}`, details: { reason: 'run' } })))
    t.equal(metric(await metrics(), 'berth_backup_failures_total', 'target="disk",reason="run"'), 1)
    t.match(errors().at(-1), { msg: 'backup failed', err: { message: /unknown secret "S3_SECRET"/ } })
    t.notMatch(lines(), 'S3RVER-secret-value', 'the S3 secret key is never logged')

    // A restart: the gauges come back from the plugin's state before any run.
    await kernel.stop()
    const again = await reconcilerKernel(t, docker, { plugins: [backup], sections, restartOf: first })
    t.equal(metric(await metrics(again.kernel), 'berth_backup_last_success_timestamp_seconds', 'target="disk"'), firstAt, 'kept across the restart')
  })

  t.test('on a valid schedule, snapshots are taken by themselves', async t => {
    const local = tempDir(t)
    const { kernel } = await reconcilerKernel(t, docker, {
      plugins: [backup],
      sections: { backup: { enabled: true, schedule: '* * * * * *', targets: [{ type: 'local', path: local }] } }
    })
    const health = await api<{ plugins: Record<string, { details?: Record<string, unknown> }> }>(kernel, 'GET', '/api/v1/health')
    t.same(health.body.plugins.backup.details, { schedule: '* * * * * *', targets: 1 })
    const taken = await pollUntil(() => { const ids = readdirSync(local).filter(id => /^\d{8}T\d{9}Z$/.test(id)); return ids.length > 0 && ids }, { timeout: 15_000, what: 'a scheduled snapshot' })
    const manifest = JSON.parse(readFileSync(join(local, taken[0], 'manifest.json'), 'utf8')) as { state: Array<{ plugin: string }> }
    t.ok(manifest.state.some(s => s.plugin === 'tokens'), 'with the plugins\' state')
  })
}
