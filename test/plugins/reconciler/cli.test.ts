// The orchestration commands as an operator runs them, against `berth server` in a child process
// whose working directory holds services/ and cluster.toml: progress, tables, JSON, logs, the deploy
// history, pruning, exit codes.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { HistoryEntry } from '../../../plugins/reconciler/state.js'
import { runCli, spawnCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { dockerEngine } from '../../support/docker.js'
import { busyboxInRegistry, instanceContainers, removeInstanceAtEnd, serverDir, startServer, testInstance, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('deploy, status, logs, restart, redeploy and reload through the CLI', async t => {
    const image = await busyboxInRegistry(t, docker)
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const server = await serverDir(t, ['tokens', 'secrets', 'reconciler'], `[reconciler]\ninstance = "${instance}"\nnetwork = "berth-test"\nstop_timeout_secs = 0\n`)
    const project = `p${instance.slice(-6)}`
    const talker = `[[service]]\nname = "talker"\nimage = "${image}"\nreplicas = 2\ncommand = ["/bin/busybox", "sh", "-c", "echo hello; exec /bin/busybox sleep 3600"]\n`
    writeServices(server.dir, { [project]: talker })
    await startServer(t, server)
    const cli = async (...args: string[]): ReturnType<typeof runCli> => await runCli(args, { cwd: server.dir })

    const deployed = await cli('deploy')
    t.equal(deployed.code, 0, deployed.stderr)
    t.match(deployed.stderr, /^deploying all services on http:\/\/127\.0\.0\.1:\d+ …\n/, 'progress on stderr')
    t.equal(deployed.stdout, '  talker  updated\n1 deployed (1 updated), 0 removed, 0 failed\n')
    t.equal((await cli('deploy', 'talker')).stdout, '  talker  unchanged\n1 deployed (0 updated), 0 removed, 0 failed\n')

    // A service a request deployed stays through a plain deploy of the files; --prune removes it.
    const token = readFileSync(join(server.stateDir, 'admin.token'), 'utf8').trim()
    const requested = await fetch(`${server.url}/api/v1/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ services: [{ name: 'asked', project, image, command: ['/bin/busybox', 'sleep', '3600'] }] })
    })
    t.equal(requested.status, 200, await requested.text())
    t.equal((await cli('deploy')).stdout, '  talker  unchanged\n  asked   kept: deployed by a request, in no service file (--prune removes it)\n1 deployed (0 updated), 0 removed, 0 failed\n')
    const pruned = await cli('deploy', '--prune')
    t.equal(pruned.code, 0, pruned.stderr)
    t.equal(pruned.stdout, '  talker  unchanged\n  asked   removed\n1 deployed (0 updated), 1 removed, 0 failed\n', 'the CLI says what it removed')

    // The history: every deploy that changed something, oldest first; one service's; JSON.
    const history = await cli('deploys')
    t.equal(history.code, 0, history.stderr)
    const stamp = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ'
    t.match(history.stdout, new RegExp(`^AT +TRIGGER +BY +SERVICES +RESULT\\n${stamp} +deploy +admin +talker +ok\\n${stamp} +deploy +admin +asked +ok\\n${stamp} +deploy +admin +talker +ok\\n$`))
    const asked = await cli('deploys', 'asked')
    t.match(asked.stdout, new RegExp(`^AT +TRIGGER +BY +IMAGE +HASH +RESULT\\n${stamp} +deploy +admin +${image.replace(/[.]/g, '\\.')} +[0-9a-f]{12} +deployed\\n$`))
    const talkerHistory = JSON.parse((await cli('deploys', 'talker', '--json')).stdout) as { deploys: HistoryEntry[] }
    t.same(talkerHistory.deploys.map(d => [d.trigger, d.deployed]), [['deploy', ['talker']], ['deploy', ['talker']]], 'JSON holds the entries of that service only')
    t.equal((await cli('deploys', 'nobody')).stdout, 'no deploys of nobody recorded\n')

    const table = await cli('status')
    t.equal(table.code, 0, table.stderr)
    t.equal(table.stdout, `NAME    PROJECT  STATUS   REPLICAS  RESTARTS  IMAGE${' '.repeat(image.length - 3)}DOMAIN\ntalker  ${project}  running  2/2       0         ${image}\n`)
    const json = JSON.parse((await cli('status', '--json', '--project', project)).stdout) as { services: Array<{ name: string, running_replicas: number }> }
    t.match(json.services, [{ name: 'talker', running_replicas: 2 }])

    const logs = await pollUntil(async () => { const r = await cli('logs', 'talker', '--tail', '1'); return r.stdout.includes('talker-2') && r }, { what: 'logs of both replicas' })
    t.equal(logs.stdout, `${project}-talker-1 | hello\n${project}-talker-2 | hello\n`)
    const follower = spawnCli(['logs', 'talker', '-f'], { cwd: server.dir })
    t.teardown(() => { follower.kill('SIGKILL') })
    await pollUntil(() => follower.output().includes(`${project}-talker-2 | hello`), { what: 'followed logs' })
    t.equal(follower.exitCode, null, 'logs -f keeps running')
    follower.kill('SIGTERM')

    const restarted = await cli('restart', 'talker')
    t.equal(restarted.stdout, `restarted ${project}-talker-1, ${project}-talker-2\n`)
    const before = (await instanceContainers(docker, instance)).get(`${project}-talker-1`)?.Id
    const redeployed = await cli('redeploy', 'talker')
    t.equal(redeployed.code, 0, redeployed.stderr)
    t.equal(redeployed.stdout, '  talker  updated\n1 deployed (1 updated), 0 removed, 0 failed\n')
    t.not((await instanceContainers(docker, instance)).get(`${project}-talker-1`)?.Id, before, 'redeploy recreated the containers')
    const scaled = await cli('scale', 'talker', '3')
    t.equal(scaled.stdout, '  talker  updated\n1 deployed (1 updated), 0 removed, 0 failed\n', scaled.stderr)
    t.same([...(await instanceContainers(docker, instance)).keys()].filter(n => n.includes('-talker-')).sort(), [1, 2, 3].map(n => `${project}-talker-${n}`), 'scale runs that many replicas')

    writeServices(server.dir, { [project]: talker + '[[service]]\nname = "ghost"\nimage = "127.0.0.1:1/none:1"\n' })
    const reloaded = await cli('reload')
    t.equal(reloaded.code, 1, 'a failed service makes the command fail')
    t.match(reloaded.stdout, /^ {2}talker {2}updated\n {2}ghost {3}failed: pulling 127\.0\.0\.1:1\/none:1: .*\n1 deployed \(1 updated\), 0 removed, 1 failed\n$/)
    t.match(reloaded.stderr, /\nberth: 1 service failed: ghost: pulling 127\.0\.0\.1:1\/none:1: .*\n$/)

    for (const [args, code, message] of [
      [['deploy', 'nope'], 1, 'berth: no service named "nope" in services/*/service.toml'],
      [['deploy', 'talker', '--prune'], 2, 'berth: --prune goes with a deploy of every service (berth deploy --prune)'],
      [['scale', 'talker', 'two'], 2, 'berth: the number of replicas is a whole number from 0, got "two"'],
      [['scale', 'nope', '2'], 1, 'berth: no service named "nope" is deployed'],
      [['logs', 'talker', '--tail', 'x'], 2, 'berth: option \'-n, --tail <lines>\' argument \'x\' is invalid. must be a whole number of lines']
    ] as const) {
      const result = await cli(...args)
      t.equal(result.code, code, `${args.join(' ')} exits ${code}`)
      t.equal(result.stderr.trim().split('\n').at(-1), message)
    }
  })
}
