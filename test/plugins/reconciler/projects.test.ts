// Projects as namespaces, on the stand-in engine (test/support/fake-engine.ts; who may reach what is
// the subject, not Docker): every orchestration route of the control API × every role
// × a token for every project or one limited to a project, inside and outside it, asserted both ways
// in one table (what a role may not do is 403; another project's service, job, webhook or project is
// a 404 as if it did not exist; listings hold only the token's projects; what acts on every project
// is 403 to a limited token); then secrets: a service uses its project's and the shared ones, and a
// deploy naming another project's secret is refused (the environment as the container is given it;
// that Docker passes it on is features.test.ts's).
import t from 'tap'
import backup from '../../../plugins/backup/index.js'
import cluster from '../../../plugins/cluster/index.js'
import databases from '../../../plugins/databases/index.js'
import nodes from '../../../plugins/nodes/index.js'
import notifications from '../../../plugins/notifications/index.js'
import proxy from '../../../plugins/proxy/index.js'
import webhooks from '../../../plugins/webhooks/index.js'
import { BUSYBOX_IMAGE as image } from '../../support/docker.js'
import { FAKE_HTTPD, FakeEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel, writeServices, type ApiAnswer } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'
import type { Kernel } from '../../../kernel/index.js'

/**
 * A stand-in engine whose busybox image serves as busybox httpd does, and answers `sh -c 'echo "..."'`
 * with the container's environment put in, as the shell would.
 */
function busyboxEngine (): FakeEngine {
  return new FakeEngine({
    images: {
      [image]: {
        ...FAKE_HTTPD,
        run: (command, container) => {
          const echo = /^echo "(.*)"$/.exec(command.at(-1) ?? '')
          if (echo === null) return { exitCode: 127, output: `sh: not a command this stand-in runs: ${command.join(' ')}\n` }
          return { exitCode: 0, output: `${echo[1].replace(/\$(\w+)/g, (_m, name: string) => container?.env[name] ?? '')}\n` }
        }
      }
    }
  })
}

type Role = 'viewer' | 'deployer' | 'admin'
const ORDER: Role[] = ['viewer', 'deployer', 'admin']

/**
 * How a route treats a token limited to projects: `named` acts on one named thing (another project's
 * is 404), `listed` answers a listing (another project's left out), `every` acts on every project
 * (403), `open` is not about a project (answered alike), `create` declares a service (another
 * project's is 403).
 */
type Scope = 'named' | 'listed' | 'every' | 'open' | 'create'

interface Row {
  method: string
  /** `{svc}`, `{job}`, `{project}`, `{hook}`: the project's own (or the other project's) names. */
  path: string
  role: Role
  scope: Scope
  body?: (names: Names) => unknown
}

interface Names { svc: string, project: string, hook: string, job: string, volume: string, domain: string }

const ROWS: Row[] = [
  { method: 'GET', path: '/api/v1/status', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/status?project={project}', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/deploys', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/jobs', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/jobs/{svc}/{job}', role: 'viewer', scope: 'named' },
  { method: 'GET', path: '/api/v1/services/{svc}/logs?tail=5', role: 'viewer', scope: 'named' },
  { method: 'GET', path: '/api/v1/services/{svc}/exec', role: 'deployer', scope: 'named' },
  { method: 'GET', path: '/api/v1/cluster/info', role: 'viewer', scope: 'open' },
  { method: 'GET', path: '/api/v1/reload', role: 'viewer', scope: 'open' },
  { method: 'GET', path: '/api/v1/webhooks', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/webhooks/{hook}/history', role: 'viewer', scope: 'named' },
  { method: 'GET', path: '/api/v1/backups', role: 'viewer', scope: 'listed' },
  { method: 'GET', path: '/api/v1/proxy/routes', role: 'viewer', scope: 'listed' },
  { method: 'POST', path: '/api/v1/deploy?service={svc}', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/deploy', role: 'deployer', scope: 'create', body: n => ({ services: [{ name: `${n.svc}-x`, project: n.project, image: 'berth-test/busybox:1', replicas: 0 }] }) },
  { method: 'POST', path: '/api/v1/deploy', role: 'deployer', scope: 'every' },
  { method: 'POST', path: '/api/v1/services/{svc}/scale', role: 'deployer', scope: 'named', body: () => ({ replicas: 1 }) },
  { method: 'POST', path: '/api/v1/services/{svc}/redeploy', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/services/{svc}/restart', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/services/{svc}/rollback', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/services/{svc}/promote', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/reload', role: 'deployer', scope: 'every' },
  { method: 'POST', path: '/api/v1/webhooks', role: 'deployer', scope: 'named', body: n => ({ repo: 'team/app', service_name: n.svc, branch: 'main', secret: 'a-secret-of-16-chars' }) },
  { method: 'POST', path: '/api/v1/webhooks', role: 'deployer', scope: 'every', body: () => ({ repo: 'team/infra', service_name: '__infra__', branch: 'main', secret: 'a-secret-of-16-chars' }) },
  { method: 'GET', path: '/api/v1/tokens', role: 'admin', scope: 'open' },
  { method: 'GET', path: '/api/v1/secrets', role: 'admin', scope: 'open' },
  { method: 'PUT', path: '/api/v1/secrets/MATRIX?project={project}', role: 'admin', scope: 'open', body: () => ({ value: 'v' }) },
  { method: 'POST', path: '/api/v1/backups/restore', role: 'admin', scope: 'open', body: () => ({ name: 'no-such-volume' }) },
  { method: 'POST', path: '/api/v1/backups', role: 'admin', scope: 'open' },
  { method: 'DELETE', path: '/api/v1/secrets/MATRIX?project={project}', role: 'admin', scope: 'open' },
  { method: 'DELETE', path: '/api/v1/tokens/000000000000', role: 'admin', scope: 'open' },
  { method: 'POST', path: '/api/v1/databases', role: 'admin', scope: 'open', body: () => ({ engine: 'none' }) },
  { method: 'POST', path: '/api/v1/notifications/test', role: 'admin', scope: 'open' },
  // The only node: a drain without force is refused (it would strand replicas), changing nothing.
  { method: 'POST', path: '/api/v1/cluster/nodes/solo/drain', role: 'deployer', scope: 'every' },
  { method: 'POST', path: '/api/v1/cluster/nodes/solo/undrain', role: 'deployer', scope: 'every' },
  { method: 'DELETE', path: '/api/v1/cluster/nodes/solo', role: 'admin', scope: 'open' },
  // Last: these remove what the rows above read.
  { method: 'DELETE', path: '/api/v1/webhooks/{hook}', role: 'deployer', scope: 'named' },
  { method: 'DELETE', path: '/api/v1/services/{svc}', role: 'deployer', scope: 'named' },
  { method: 'DELETE', path: '/api/v1/projects/{project}', role: 'deployer', scope: 'named' },
  { method: 'POST', path: '/api/v1/stop', role: 'deployer', scope: 'every' }
]

function fill (path: string, names: Names): string {
  return path.replace(/\{(\w+)\}/g, (_m, key: keyof Names) => names[key])
}

t.test('every route × every role × inside and outside the token\'s projects (stand-in engine)', async t => {
  const local = tempDir(t)
  const { kernel, cwd, instance, token: admin } = await reconcilerKernel(t, busyboxEngine(), {
    plugins: [cluster, nodes, webhooks, backup, proxy, databases, notifications],
    extra: { node_name: 'solo' },
    sections: { backup: { targets: [{ type: 'local', name: 'disk', path: local }] }, proxy: { http_port: 0, https_port: 0 }, acme: { directory: '' } }
  })
  const suffix = instance.slice(-6)
  const names = (project: string): Names => ({ project, svc: `${project}-web`, job: 'tick', hook: '', volume: `${project}_data`, domain: `${project}.test` })
  const own = names(`al${suffix}`)
  const other = names(`be${suffix}`)
  const serviceFile = (n: Names): string => `[[service]]\nname = "${n.svc}"\nimage = "${image}"\nport = 8080\ndomain = "${n.domain}"\ncommand = ["/bin/busybox", "httpd", "-f", "-p", "8080"]\n` +
    '[[service.volumes]]\nsource = "data"\ntarget = "/data"\n[[service.jobs]]\nname = "tick"\nschedule = "0 0 0 1 1 *"\ncommand = ["/bin/busybox", "true"]\n'
  const setUp = async (): Promise<void> => {
    writeServices(cwd, { [own.project]: serviceFile(own), [other.project]: serviceFile(other) })
    const deployed = await api<{ errors: unknown[] }>(kernel, 'POST', '/api/v1/deploy', { token: admin })
    t.same([deployed.status, deployed.body.errors], [200, []], `both projects deployed: ${deployed.text}`)
    for (const n of [own, other]) {
      const hook = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token: admin, body: { repo: `team/${n.project}`, service_name: n.svc, branch: 'main', secret: 'a-secret-of-16-chars' } })
      n.hook = hook.body.id
    }
  }
  await setUp()
  t.match((await api(kernel, 'POST', '/api/v1/backups', { token: admin })).text, /"result"/, 'a backup of both projects\' volumes')
  const tokens: Record<string, { token: string, role: Role, limited: boolean }> = {}
  for (const role of ORDER) {
    for (const limited of role === 'admin' ? [false] : [false, true]) {
      const name = `${role}${limited ? '-limited' : ''}`
      const created = role === 'admin' && !limited
        ? { token: admin }
        : (await api<{ token: string }>(kernel, 'POST', '/api/v1/tokens', { token: admin, body: { name, role, ...(limited && { projects: [own.project] }) } })).body
      tokens[name] = { token: created.token, role, limited }
    }
  }

  const call = async (row: Row, token: string, n: Names): Promise<ApiAnswer<{ error?: string, code?: string }>> =>
    await api(kernel, row.method, fill(row.path, n), { token, body: row.body?.(n) })
  // Allowed: neither refused nor (but for admin-only routes, where a missing thing is one) unseen.
  const allowedAnswer = (answer: ApiAnswer, row: Row): boolean => ![401, 403, ...(row.scope === 'open' ? [] : [404])].includes(answer.status)
  const ghost = { ...names(`gh${suffix}`), hook: '000000000000' }
  const withoutNames = (text: string, n: Names): string => text.replaceAll(n.svc, 'NAME').replaceAll(n.project, 'PROJECT').replaceAll(n.hook, 'HOOK')
  for (const row of ROWS) {
    const what = `${row.method} ${row.path}`
    if (row.path.includes('/stop') || row.path.includes('/projects/') || (row.method === 'DELETE' && row.path.includes('/services/'))) await setUp()
    for (const [label, { token, role, limited }] of Object.entries(tokens)) {
      if (ORDER.indexOf(role) < ORDER.indexOf(row.role)) {
        const answer = await call(row, token, own)
        t.same([answer.status, answer.body.code], [403, 'BERTH_ROLE_TOO_LOW'], `${label}: ${what} needs ${row.role}`)
        continue
      }
      if (!limited || row.scope === 'open') {
        // Another project's first: its answer must not depend on whose it is.
        for (const n of row.scope === 'every' ? [own] : [other, own]) {
          if (row.method === 'DELETE') await setUp()
          const answer = await call(row, token, n)
          t.ok(allowedAnswer(answer, row), `${label}: ${fill(what, n)} is allowed (${answer.status} ${answer.text.slice(0, 160)})`)
        }
        continue
      }
      if (row.scope === 'every') {
        const answer = await call(row, token, own)
        t.same([answer.status, answer.body.code], [403, 'BERTH_PROJECT_SCOPE'], `${label}: ${what} acts on every project: 403 (${answer.text.slice(0, 160)})`)
        continue
      }
      const outside = await call(row, token, other)
      if (row.scope === 'listed') {
        t.ok(outside.status === 200 && !outside.text.includes(other.svc) && !outside.text.includes(other.volume) && !outside.text.includes(other.domain), `${label}: ${fill(what, other)} leaves out the other project (${outside.text.slice(0, 200)})`)
      } else if (row.scope === 'create') {
        t.same([outside.status, outside.body.code], [403, 'BERTH_PROJECT_SCOPE'], `${label}: ${what} into the other project: 403`)
      } else {
        const missing = await call(row, token, ghost)
        t.same([outside.status, withoutNames(outside.text, other)], [404, withoutNames(missing.text, ghost)], `${label}: ${fill(what, other)} is the 404 of one that does not exist (${outside.text.slice(0, 160)})`)
        if (row.method === 'DELETE') t.ok(await stillThere(kernel, admin, other.svc) && (await api(kernel, 'GET', `/api/v1/webhooks/${other.hook}/history`, { token: admin })).status === 200, 'and removed nothing')
      }
      if (row.method === 'DELETE') await setUp()
      const inside = await call(row, token, own)
      t.ok(allowedAnswer(inside, row), `${label}: ${fill(what, own)} inside its project is allowed (${inside.status} ${inside.text.slice(0, 160)})`)
      if (row.scope === 'listed' && !row.path.includes('/backups') && !row.path.includes('/deploys')) t.ok(inside.text.includes(own.svc), `${label}: ${what} lists its own project`)
    }
  }
})

t.test('a deployer limited to a project cannot take another project\'s name or secrets (stand-in engine)', async t => {
  const { kernel, instance, token: admin } = await reconcilerKernel(t, busyboxEngine())
  const suffix = instance.slice(-6)
  const [mine, theirs] = [`mi${suffix}`, `th${suffix}`]
  const deployer = (await api<{ token: string }>(kernel, 'POST', '/api/v1/tokens', { token: admin, body: { name: 'team', role: 'deployer', projects: [mine] } })).body.token
  const service = (name: string, project: string, env: Record<string, string> = {}): unknown => ({ services: [{ name, project, image, command: ['/bin/busybox', 'sleep', '300'], env }] })
  t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token: admin, body: service(`${theirs}-db`, theirs) })).status, 200)
  const taken = await api<{ code: string }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service(`${theirs}-db`, mine) })
  t.same([taken.status, taken.body.code], [409, 'BERTH_NAME_TAKEN'], 'a name another project holds is not taken over')

  const put = async (name: string, value: string, query = '', sharedWith?: string[]): Promise<number> =>
    (await api(kernel, 'PUT', `/api/v1/secrets/${name}${query}`, { token: admin, body: { value, ...(sharedWith !== undefined && { shared_with: sharedWith }) } })).status
  t.equal(await put('DB_PASSWORD', 'theirs-password', `?project=${theirs}`), 201, 'a secret of the other project')
  t.equal(await put('DB_PASSWORD', 'my-password', `?project=${mine}`), 201, 'one of the same name of mine')
  t.equal(await put('SMTP', 'shared-value'), 201, 'a secret shared with every project')
  t.equal(await put('ONLY_THEIRS', 'x', '', [theirs]), 201, 'a secret shared with the other project only')
  const refused = await api<{ error: string, code: string }>(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service(`${mine}-app`, mine, { A: '${secrets.ONLY_THEIRS}' }) })
  t.same([refused.status, refused.body.code], [403, 'BERTH_SPEC_REFUSED'])
  t.match(refused.body.error, /env\.A refers to secret "ONLY_THEIRS", which is another project's and not shared with project "mi/, 'naming the variable and the secret')
  const { status } = await api(kernel, 'POST', '/api/v1/deploy', { token: deployer, body: service(`${mine}-app`, mine, { PW: '${secrets.DB_PASSWORD}', MAIL: '${secrets.SMTP}' }) })
  t.equal(status, 200)
  const run = await kernel.service('reconciler').reconciler.exec(`${mine}-app`, 'echo "$PW $MAIL"')
  t.equal(run.output.trim(), 'my-password shared-value', 'its own project\'s secret and the shared one, never the other project\'s of the same name')
  const listed = await api<{ secrets: Array<{ name: string, project?: string, shared_with?: string[] }> }>(kernel, 'GET', '/api/v1/secrets', { token: admin })
  t.same(listed.body.secrets.map(s => [s.name, s.project ?? null, s.shared_with ?? null]).sort(), [
    ['DB_PASSWORD', mine, null], ['DB_PASSWORD', theirs, null], ['ONLY_THEIRS', null, [theirs]], ['SMTP', null, null]
  ].sort(), 'listed with whose they are, never their values')
  t.notOk(JSON.stringify(listed.body).includes('password'), 'no value listed')
})

async function stillThere (kernel: Kernel, token: string, service: string): Promise<boolean> {
  const status = await api<{ services: Array<{ name: string }> }>(kernel, 'GET', '/api/v1/status', { token })
  return status.body.services.some(s => s.name === service)
}
