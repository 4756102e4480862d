// Scheduled jobs against the real Docker engine: `[[service.jobs]]` run every second as one-off
// containers of the service's image and environment; a run's exit code and output kept and shown by
// the API and `berth jobs`; a failing job an operator alert; a run due while the last still runs
// skipped and counted; a stopped service's jobs not run; a schedule that is not six cron fields
// refused when deployed; a server stopped during a run keeps it as interrupted and removes its container.
import t from 'tap'
import type { OperatorAlert } from '../../../kernel/index.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine } from '../../support/docker.js'
import { api, reconcilerKernel, tokenFor, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

interface Status { service: string, job: string, next_run: string | null, skipped: number, last_run: { exit_code: number | null, output: string } | null }

if (docker !== undefined) {
  t.test('jobs run on their schedule, are kept with their outcome, skipped while running, alerted when failing', async t => {
    const image = await busyboxImage(docker)
    const { kernel, cwd, project, token, instance } = await reconcilerKernel(t, docker)
    const alerts: OperatorAlert[] = []
    kernel.events.on('operator.alert', alert => { alerts.push(alert) })
    const job = (name: string, command: string[]): string => `[[service.jobs]]\nname = "${name}"\nschedule = "* * * * * *"\ncommand = ${JSON.stringify(command)}\n`
    writeServices(cwd, {
      [project]: `[[service]]\nname = "worker"\nimage = "${image}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n[service.env]\nGREETING = "hello from the service's environment"\n` +
        job('tick', ['/bin/busybox', 'sh', '-c', 'echo "$GREETING"']) + job('broken', ['/bin/busybox', 'sh', '-c', 'echo broken >&2; exit 3']) + job('slow', ['/bin/busybox', 'sleep', '2.5'])
    })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    const viewer = await tokenFor(kernel, 'viewer')
    const statuses = async (): Promise<Map<string, Status>> =>
      new Map((await api<{ jobs: Status[] }>(kernel, 'GET', '/api/v1/jobs', { token: viewer })).body.jobs.map(s => [s.job, s]))
    const seen = await pollUntil(async () => {
      const now = await statuses()
      return now.get('tick')?.last_run?.exit_code === 0 && now.get('broken')?.last_run?.exit_code === 3 && (now.get('slow')?.skipped ?? 0) >= 1 && now
    }, { timeout: 30_000, what: 'each job to have run (and the slow one to be skipped once)' })
    t.match(seen.get('tick'), { service: 'worker', next_run: /^\d{4}-/, last_run: { exit_code: 0, output: 'hello from the service\'s environment\n' } }, 'a run: its exit code and output, with the service\'s environment')
    t.match(seen.get('broken')?.last_run, { exit_code: 3, output: 'broken\n' }, 'a failing run, its errors kept')
    t.ok((seen.get('slow')?.skipped ?? 0) >= 1, 'a run due while the last one still runs is skipped and counted')
    t.match(alerts.find(a => a.kind === 'job.failed'), { subject: 'worker', message: 'job broken of worker exited with 3', details: { job: 'broken', exit_code: 3 } }, 'a failed run is an operator alert')
    t.notOk(alerts.some(a => a.kind === 'job.failed' && a.details?.job !== 'broken'), 'only the failing job alerts')

    const runs = await api<{ runs: Array<{ exit_code: number, started_at: string }> }>(kernel, 'GET', '/api/v1/jobs/worker/tick', { token: viewer })
    t.ok(runs.body.runs.length >= 1 && runs.body.runs.every(r => r.exit_code === 0), 'a job\'s runs')
    t.equal((await api(kernel, 'GET', '/api/v1/jobs/worker/nope', { token: viewer })).status, 404)
    t.equal((await api(kernel, 'GET', '/api/v1/jobs')).status, 401, 'not without a token')

    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: viewer }
    t.match((await runCli(['jobs'], { env })).stdout, /^SERVICE\s+JOB\s+SCHEDULE\s+NEXT RUN\s+LAST RUN\s+EXIT\s+SKIPPED\n(.*\n)*worker\s+broken\s+\* \* \* \* \* \*\s+\S+\s+\S+\s+3\s+\d+\n/, 'berth jobs')
    t.match((await runCli(['jobs', 'worker', 'tick'], { env })).stdout, /^STARTED\s+DURATION\s+EXIT\n(.*\n)+output of the last run:\nhello from the service's environment\n$/, 'berth jobs <service> <job>')
    t.equal((await runCli(['jobs', 'worker', 'nope'], { env })).code, 1)

    // Clearing leftovers (as a start does) leaves the runs this process has in progress alone.
    const jobContainers = async (): Promise<string[]> => (await docker.listContainers({ all: true, filters: { label: [`berth.job-instance=${instance}`] } })).map(c => c.Id)
    const running = await pollUntil(async () => { const ids = await jobContainers(); return ids.length > 0 && ids }, { what: 'a job container' })
    t.equal(await kernel.service('reconciler').engine.removeJobLeftovers(), 0, 'no leftovers while runs are in progress')
    t.ok((await jobContainers()).some(id => running.includes(id)), 'the running job containers are still there')

    // Stopped, its jobs no longer run; a schedule of five fields is refused.
    t.equal((await api(kernel, 'POST', '/api/v1/stop', { token })).status, 200)
    t.same((await statuses()).size, 0, 'a stopped service\'s jobs are not run')
    const refused = await api<{ error: string }>(kernel, 'POST', '/api/v1/deploy', {
      token, body: { services: [{ name: 'bad', project, image, jobs: [{ name: 'x', schedule: '* * * * *', command: ['true'] }] }] }
    })
    t.equal(refused.status, 400)
    t.match(refused.body.error, /jobs\[0\]\.schedule must have six fields \(second minute hour day-of-month month day-of-week\), got "\* \* \* \* \*"/)
  })

  t.test('a server that stops during a run keeps it as interrupted, and its container goes', async t => {
    const image = await busyboxImage(docker)
    const first = await reconcilerKernel(t, docker)
    const { kernel, cwd, project, token } = first
    const jobContainers = async (): Promise<string[]> => (await docker.listContainers({ all: true, filters: { label: [`berth.job-instance=${first.instance}`] } })).map(c => c.Id)
    writeServices(cwd, {
      [project]: `[[service]]\nname = "worker"\nimage = "${image}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n[[service.jobs]]\nname = "long"\nschedule = "* * * * * *"\ncommand = ["/bin/busybox", "sleep", "300"]\n`
    })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    const [running] = await pollUntil(async () => { const ids = await jobContainers(); return ids.length > 0 && ids }, { timeout: 20_000, what: 'the long run to start' })
    await kernel.stop()
    const again = await reconcilerKernel(t, docker, { restartOf: first })
    const runs = await pollUntil(async () => {
      const answer = await api<{ runs: Array<{ exit_code: number | null, error?: string }> }>(again.kernel, 'GET', '/api/v1/jobs/worker/long', { token: again.token })
      return answer.body.runs?.length > 0 && answer.body.runs
    }, { what: 'the run kept' })
    t.match(runs[0], { exit_code: null, error: 'interrupted: the server stopped while it ran' }, 'kept as interrupted')
    await pollUntil(async () => !(await jobContainers()).includes(running), { timeout: 20_000, what: 'the interrupted run\'s container to go' })
    t.pass('its container removed')
  })
}
