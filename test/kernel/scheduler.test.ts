// Scheduled jobs: six-field cron only, intervals, no overlap, failures counted, nothing after stop.
import t from 'tap'
import pino from 'pino'
import { Scheduler, cronProblem } from '../../kernel/scheduler.js'
import { pollUntil } from '../support/poll.js'

t.test('cron expressions must have six fields', async t => {
  t.equal(cronProblem('*/10 * * * * *'), undefined)
  t.equal(cronProblem('0 3 * * *'), 'six fields expected (seconds minutes hours day-of-month month day-of-week), got 5')
  t.equal(cronProblem('0 0 0 3 * * 2030'), 'six fields expected (seconds minutes hours day-of-month month day-of-week), got 7')
  t.type(cronProblem('0 0 25 * * *'), 'string', 'an hour of 25 is refused')
  const scheduler = new Scheduler(pino({ level: 'silent' }))
  t.throws(() => scheduler.cron('nightly', '0 3 * * *', () => {}), { message: /^schedule "nightly": six fields expected/ })
  t.throws(() => scheduler.every('tick', 0, () => {}), { message: /positive number of milliseconds/ })
})

t.test('jobs run only between start and stop; a failing run is counted and the job goes on', async t => {
  const failures: string[] = []
  const scheduler = new Scheduler(pino({ level: 'silent' }), job => { failures.push(job) })
  t.teardown(() => { scheduler.stop() })
  let ticks = 0
  let cronRuns = 0
  scheduler.every('tick', 5, () => {
    ticks++
    if (ticks === 2) throw new Error('second run fails')
  })
  scheduler.cron('each-second', '* * * * * *', () => { cronRuns++ })
  t.equal(ticks, 0, 'nothing runs before start')
  scheduler.start()
  await pollUntil(() => ticks >= 4 && cronRuns >= 1, { what: 'interval and cron runs', timeout: 5000 })
  t.same(failures, ['tick'])
  scheduler.stop()
  const frozen = ticks
  await new Promise(resolve => setTimeout(resolve, 30))
  t.equal(ticks, frozen, 'no run after stop')
})

t.test('a slow job never overlaps itself', async t => {
  const scheduler = new Scheduler(pino({ level: 'silent' }))
  t.teardown(() => { scheduler.stop() })
  let running = 0
  let maxRunning = 0
  let runs = 0
  scheduler.every('slow', 2, async () => {
    running++
    maxRunning = Math.max(maxRunning, running)
    await new Promise(resolve => setTimeout(resolve, 15))
    running--
    runs++
  })
  scheduler.start()
  await pollUntil(() => runs >= 3, { what: 'three slow runs' })
  t.equal(maxRunning, 1)
})
