// service.toml discovery and validation: defaults, every field, problems naming file, service and
// field, unknown fields, depends_on cycles and unknown names, one owner per domain and host port;
// several names, aliases and scheduled jobs.
import t, { type Test } from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { discoverServices, parseRequestServices, SpecError } from '../../../plugins/reconciler/discovery.js'
import { specHash } from '../../../plugins/reconciler/hash.js'
import { imageTag, localImageName } from '../../../plugins/reconciler/image-ref.js'
import { parseMemory } from '../../../plugins/reconciler/units.js'
import { tempDir } from '../../support/tmp.js'

const runtimes = ['docker']

/** A working directory with services/<folder>/service.toml for each entry. */
function project (t: Test, files: Record<string, string>): string {
  const cwd = tempDir(t)
  for (const [folder, text] of Object.entries(files)) {
    mkdirSync(join(cwd, 'services', folder), { recursive: true })
    writeFileSync(join(cwd, 'services', folder, 'service.toml'), text)
  }
  return cwd
}

function problems (fn: () => unknown): string[] {
  try {
    fn()
  } catch (err) {
    if (err instanceof SpecError) return [...err.problems]
    throw err
  }
  throw new Error('no SpecError thrown')
}

const discover = (cwd: string): ReturnType<typeof discoverServices> => discoverServices({ cwd, servicesDir: 'services', runtimes })

t.test('a minimal service gets every default; the folder is the project', async t => {
  const cwd = project(t, { shop: '[[service]]\nname = "web"\nimage = "nginx:1.27"\n' })
  const [declared] = discover(cwd)
  t.equal(declared.source, 'services/shop/service.toml')
  t.same(declared.spec, {
    name: 'web', project: 'shop', image: 'nginx:1.27', runtime: 'docker', replicas: 1, depends_on: [], extra_ports: [],
    env: {}, volumes: [], mounts: [], internal: false
  })
})

t.test('every field is read; relative mount sources resolve against the working directory', async t => {
  const cwd = project(t, {
    shop: `project = "store"
[[service]]
name = "api"
image = "registry.local:5000/api:2"
runtime = "docker"
command = ["api", "--port", "8080"]
domain = "api.example.com"
port = 8080
replicas = 3
health = "/healthz"
depends_on = ["db"]
extra_ports = ["9090:9090"]
internal = false
[service.env]
DATABASE_URL = "postgres://app:\${secrets.DB_PASSWORD}@db/app"
[[service.volumes]]
source = "api-data"
target = "/data"
[[service.mounts]]
source = "services/shop/config"
target = "/etc/api"
read_only = true
[service.liveness]
interval_secs = 5
[service.backup]
pre_hook = "api dump /data/dump.sql"
[service.resources]
memory = "512m"
cpu = 1.5
[service.placement]
node = "node-1"

[[service]]
name = "db"
image = "postgres:16"
`
  })
  const [api, db] = discover(cwd)
  t.same(api.spec, {
    name: 'api', project: 'store', image: 'registry.local:5000/api:2', runtime: 'docker', command: ['api', '--port', '8080'],
    domain: 'api.example.com', port: 8080, replicas: 3, health: '/healthz', depends_on: ['db'], extra_ports: [{ host: 9090, container: 9090 }],
    env: { DATABASE_URL: 'postgres://app:${secrets.DB_PASSWORD}@db/app' }, volumes: [{ source: 'api-data', target: '/data' }],
    mounts: [{ source: join(cwd, 'services/shop/config'), target: '/etc/api', read_only: true }],
    liveness: { path: '/healthz', interval_secs: 5, timeout_secs: 2, failure_threshold: 3, initial_delay_secs: 0 },
    backup: { pre_hook: 'api dump /data/dump.sql' }, resources: { memory: '512m', cpu: 1.5 }, internal: false, placement: { node: 'node-1' }
  }, 'liveness.path defaults to health')
  t.equal(db.spec.project, 'store', 'the file\'s project applies to every service in it')
})

t.test('rollback_on_failure: kept only when false', async t => {
  const cwd = project(t, {
    p: '[[service]]\nname = "a"\nimage = "x:1"\nrollback_on_failure = false\n[[service]]\nname = "b"\nimage = "x:1"\nrollback_on_failure = true\n'
  })
  const [a, b] = discover(cwd)
  t.equal(a.spec.rollback_on_failure, false)
  t.notOk('rollback_on_failure' in b.spec, 'true is the default, and is not kept')
  const wrong = project(t, { p: '[[service]]\nname = "a"\nimage = "x:1"\nrollback_on_failure = "no"\n' })
  t.same(problems(() => discover(wrong)), ['services/p/service.toml: service "a": rollback_on_failure must be true or false, got "no"'])
})

t.test('several names, aliases and jobs: read, and their problems named', async t => {
  const cwd = project(t, {
    p: `[[service]]
name = "web"
image = "x:1"
port = 80
domain = "example.com"
domains = ["example.org", "example.com"]
aliases = ["www.example.com"]
[[service.jobs]]
name = "cleanup"
schedule = "0 */5 * * * *"
command = ["/bin/cleanup"]
`
  })
  t.match(discover(cwd)[0].spec, { domain: 'example.com', domains: ['example.org', 'example.com'], aliases: ['www.example.com'], jobs: [{ name: 'cleanup', schedule: '0 */5 * * * *', command: ['/bin/cleanup'] }] })
  const wrong = project(t, {
    p: `[[service]]
name = "web"
image = "x:1"
domains = ["Example.org"]
aliases = ["www.example.com"]
[[service.jobs]]
name = "a"
schedule = "0 61 * * * *"
command = []
[[service.jobs]]
name = "a"
schedule = "@often"
command = ["x"]
[[service]]
name = "other"
image = "x:1"
port = 80
domain = "a.example.com"
aliases = ["a.example.com"]
`
  })
  t.same(problems(() => discover(wrong)), [
    'services/p/service.toml: service "web": domains[0] must be lowercase host names, got "Example.org"',
    'services/p/service.toml: service "web": jobs[0].command is required: the command to run, as a list of strings',
    'services/p/service.toml: service "web": jobs[0].schedule is not a schedule: Invalid value for minute: 61',
    'services/p/service.toml: service "web": jobs[1].schedule must have six fields (second minute hour day-of-month month day-of-week), got "@often"',
    'services/p/service.toml: service "web": jobs names "a" twice',
    'services/p/service.toml: service "web": port is required when domains is set',
    'services/p/service.toml: service "web": port is required when aliases is set',
    'services/p/service.toml: service "other": aliases must not hold "a.example.com", a name the service is served at'
  ])
})

t.test('path prefixes and route middleware: read, and their problems named; one owner per name and prefix', async t => {
  const hash = '$2b$04$abcdefghijklmnopqrstuu0123456789ABCDEFGHIJKLMNOPQRSTU'
  const cwd = project(t, {
    p: `[[service]]
name = "site"
image = "x:1"
port = 80
domain = "example.com"
[[service]]
name = "api"
image = "x:1"
port = 80
domain = "example.com"
path_prefix = "/api/"
strip_prefix = true
[service.middleware]
basic_auth = ["alice:${hash}"]
allow = ["10.0.0.0/8", "::1", "127.0.0.1"]
rate_limit = { requests = 10 }
max_body = "1m"
headers = { X-Frame-Options = "DENY" }
hsts = false
compress = true
`
  })
  const [site, api] = discover(cwd).map(d => d.spec)
  t.notOk('path_prefix' in site || 'middleware' in site, 'nothing added to a service that sets neither')
  t.same({ prefix: api.path_prefix, strip: api.strip_prefix, middleware: api.middleware }, {
    prefix: '/api',
    strip: true,
    middleware: { basic_auth: [`alice:${hash}`], allow: ['10.0.0.0/8', '::1', '127.0.0.1'], rate_limit: { requests: 10, per_seconds: 1, burst: 10 }, max_body_bytes: 1048576, headers: { 'x-frame-options': 'DENY' }, hsts: false, compress: true }
  })
  const wrong = project(t, {
    p: `[[service]]
name = "a"
image = "x:1"
port = 80
domain = "example.com"
path_prefix = "/api"
[[service]]
name = "b"
image = "x:1"
port = 80
domain = "example.com"
path_prefix = "/api"
[[service]]
name = "c"
image = "x:1"
path_prefix = "/x/../y"
strip_prefix = true
[service.middleware]
basic_auth = ["alice:plain"]
allow = ["10.0.0.0/33", "somewhere"]
rate_limit = { per_seconds = 0 }
max_body = "lots"
headers = { Content-Length = "1", "x-a" = "b\\nc" }
`
  })
  t.same(problems(() => discover(wrong)), [
    'services/p/service.toml: service "c": path_prefix must be a path of segments such as "/api" (no query, no "." or ".." segments), got "/x/../y"',
    'services/p/service.toml: service "c": middleware.basic_auth[0] must be "user:hash" entries with a bcrypt hash (as `htpasswd -nbB user password` prints)',
    'services/p/service.toml: service "c": middleware.allow[0] must be IP addresses or CIDR ranges such as "10.0.0.0/8", got "10.0.0.0/33"',
    'services/p/service.toml: service "c": middleware.allow[1] must be IP addresses or CIDR ranges such as "10.0.0.0/8", got "somewhere"',
    'services/p/service.toml: service "c": middleware.rate_limit.requests is required',
    'services/p/service.toml: service "c": middleware.rate_limit.per_seconds must be a number > 0, got 0',
    'services/p/service.toml: service "c": middleware.max_body must be a size with a unit such as "1m" or "512k", got "lots"',
    'services/p/service.toml: service "c": middleware.headers.Content-Length is set by the proxy, not by a service\'s middleware',
    'services/p/service.toml: service "c": middleware.headers.x-a must be a header value (a string without line breaks), got "b\\nc"',
    'services/p/service.toml: service "c": port is required when path_prefix is set',
    'services/p/service.toml: service "c": port is required when middleware is set',
    'services/p/service.toml: service "b": route "example.com/api" is already claimed by service "a" (services/p/service.toml)'
  ])
})

t.test('builds: a context relative to the service file\'s folder, or a folder of a git repository at a branch', async t => {
  const cwd = project(t, {
    p: `[[service]]
name = "local"
[service.build]
context = "app"
args = { V = "1" }
[[service]]
name = "remote"
image = "registry.example.com/remote"
[service.build]
git = "https://git.example.com/acme/remote.git"
context = "web"
`
  })
  const [local, remote] = discover(cwd).map(d => d.spec)
  t.same([local.image, local.build], ['berth-build/p-local', { context: join(cwd, 'services', 'p', 'app'), dockerfile: 'Dockerfile', args: { V: '1' } }])
  t.same([remote.image, remote.build], ['registry.example.com/remote', { context: 'web', git: 'https://git.example.com/acme/remote.git', ref: 'HEAD', dockerfile: 'Dockerfile', args: {} }])
  const wrong = project(t, {
    p: `[[service]]
name = "a"
[service.build]
ref = "main"
[[service]]
name = "b"
[service.build]
git = "--upload-pack=touch /tmp/x"
[[service]]
name = "c"
[service.build]
git = "https://git.example.com/c.git"
context = "../elsewhere"
ref = "-x"
`
  })
  t.same(problems(() => discover(wrong)), [
    'services/p/service.toml: service "a": build.ref needs git, the repository it names a branch or tag of',
    'services/p/service.toml: service "b": build.git must be a repository URL or path, got "--upload-pack=touch /tmp/x"',
    'services/p/service.toml: service "c": build.ref must be a branch or tag name, got "-x"',
    'services/p/service.toml: service "c": build.context must be a folder inside the repository, got "../elsewhere"'
  ])
})

t.test('problems name the file, the service and the field, all at once', async t => {
  const cwd = project(t, {
    web: `[[service]]
name = "api"
image = "x:1"
replicas = -1
port = 70000
colour = "blue"
extra_ports = ["80"]
depends_on = ["api"]
[service.env]
A = 1
B = "\${secrets.not-valid}"
[service.liveness]
path = "nope"
[service.resources]
memory = "lots"

[[service]]
image = "y:1"
`,
    'Bad_Folder': '[[service]]\nname = "x"\nimage = "x:1"\n',
    empty: 'project = "p"\n',
    broken: '[[service]\nname = "x"'
  })
  t.same(problems(() => discover(cwd)), [
    'services/Bad_Folder/service.toml: the folder name "Bad_Folder" is not a valid project name (lowercase letters, digits, dashes); set project in the file',
    'services/broken/service.toml: invalid TOML at line 1, column 11: Invalid TOML document: expected end of table array declaration',
    'services/empty/service.toml: no [[service]] tables',
    'services/web/service.toml: service "api": port must be an integer from 1 to 65535, got 70000',
    'services/web/service.toml: service "api": replicas must be an integer ≥ 0, got -1',
    'services/web/service.toml: service "api": extra_ports[0] must be "<host_port>:<container_port>" with ports from 1 to 65535, got "80"',
    'services/web/service.toml: service "api": env.A must be a string, got 1',
    'services/web/service.toml: service "api": env.B refers to an invalid secret name "not-valid"',
    'services/web/service.toml: service "api": liveness.path must be an HTTP path starting with /, got "nope"',
    'services/web/service.toml: service "api": resources.memory must be a size with a unit such as "512m" or "1g", got "lots"',
    'services/web/service.toml: service "api": colour is not a known field',
    'services/web/service.toml: service "api": depends_on must not name the service itself',
    'services/web/service.toml: [[service]] #2: name is required'
  ])
})

t.test('rules across files: names, depends_on, domains and host ports', async t => {
  const cwd = project(t, {
    a: `[[service]]
name = "web"
image = "x:1"
port = 80
domain = "shop.example.com"
extra_ports = ["8443:443"]
depends_on = ["api"]
[[service]]
name = "api"
image = "x:1"
depends_on = ["web"]
`,
    b: `[[service]]
name = "web"
image = "x:1"
[[service]]
name = "shop"
image = "x:1"
port = 80
domain = "shop.example.com"
extra_ports = ["8443:8443"]
depends_on = ["cache"]
`
  })
  t.same(problems(() => discover(cwd)), [
    'services/b/service.toml: service "web": name is already used by the service declared in services/a/service.toml',
    'services/b/service.toml: service "shop": domain "shop.example.com" is already claimed by service "web" (services/a/service.toml)',
    'services/b/service.toml: service "shop": extra_ports "8443:8443": host port 8443 is already claimed by service "web" (services/a/service.toml)',
    'services/b/service.toml: service "shop": depends_on names unknown service "cache"',
    'services/a/service.toml: service "web": depends_on cycle: web → api → web'
  ])
})

t.test('no service files at all is refused (a deploy would otherwise remove everything)', async t => {
  const cwd = tempDir(t)
  t.same(problems(() => discover(cwd)), [`no service files: ${join(cwd, 'services/*/service.toml')} matches nothing`])
})

t.test('deploy request entries are read with the same rules', async t => {
  const cwd = tempDir(t)
  const [declared] = parseRequestServices({ services: [{ name: 'web', project: 'shop', image: 'nginx:1', replicas: 2, port: 80, env: { A: 'b' } }] }, { cwd, runtimes })
  t.match(declared, { source: 'request body', spec: { name: 'web', project: 'shop', replicas: 2, env: { A: 'b' } } })
  t.same(problems(() => parseRequestServices({ services: [{ name: 'web', image: 'nginx:1', runtime: 'podman' }, 'x'] }, { cwd, runtimes })), [
    'request body: service "web": project is required',
    'request body: service "web": runtime must be one of "docker", got "podman"',
    'request body: services[1]: must be a table'
  ])
  t.same(problems(() => parseRequestServices({ services: [{ name: 'x', project: 'p', image: 'i:1', liveness: {} }] }, { cwd, runtimes })), [
    'request body: service "x": liveness.path is required (or set the service\'s health path)',
    'request body: service "x": port is required when liveness is set'
  ])
  const [checked] = parseRequestServices({ services: [{ name: 'db', project: 'p', image: 'postgres:16', healthcheck: { command: 'pg_isready', retries: 5 } }] }, { cwd, runtimes })
  t.same(checked.spec.healthcheck, { command: 'pg_isready', interval_secs: 10, timeout_secs: 5, retries: 5, start_period_secs: 0 }, 'a healthcheck with its defaults')
  const otherCheck = parseRequestServices({ services: [{ name: 'db', project: 'p', image: 'postgres:16', healthcheck: { command: 'true' } }] }, { cwd, runtimes })[0]
  t.not(specHash(checked.spec, { publish_address: '127.0.0.1', network: 'n' }), specHash(otherCheck.spec, { publish_address: '127.0.0.1', network: 'n' }), 'a changed healthcheck recreates the containers')
  t.same(problems(() => parseRequestServices({ services: [{ name: 'x', project: 'p', image: 'i:1', healthcheck: { interval_secs: 0 } }] }, { cwd, runtimes })), [
    'request body: service "x": healthcheck.command is required',
    'request body: service "x": healthcheck.interval_secs must be an integer ≥ 1, got 0'
  ])
  t.same(problems(() => parseRequestServices({ services: [] }, { cwd, runtimes })), ['request body: services must be a non-empty array of service entries'])
  t.same(problems(() => parseRequestServices({ services: [{}], extra: 1 }, { cwd, runtimes })), ['request body: extra is not a known field'])
})

t.test('the hash changes with container fields only', async t => {
  const cwd = project(t, { p: '[[service]]\nname = "web"\nimage = "x:1"\nport = 80\n' })
  const [{ spec }] = discover(cwd)
  const settings = { publish_address: '127.0.0.1', network: 'berth' }
  const base = specHash(spec, settings)
  t.match(base, /^[0-9a-f]{64}$/)
  t.equal(specHash({ ...spec }, settings), base, 'deterministic')
  t.equal(specHash({ ...spec, env: {} }, settings), base, 'key order and empty defaults do not matter')
  const job = { name: 'j', schedule: '0 * * * * *', command: ['true'] }
  for (const [field, changed] of Object.entries({ replicas: 5, domain: 'a.example.com', domains: ['b.example.com'], aliases: ['c.example.com'], health: '/h', depends_on: ['x'], internal: true, rollback_on_failure: false, jobs: [job] })) {
    t.equal(specHash({ ...spec, [field]: changed }, settings), base, `${field} does not recreate containers`)
  }
  for (const [field, changed] of Object.entries({ image: 'x:2', env: { A: '1' }, command: ['sh'], port: 81, resources: { memory: '1g' } })) {
    t.not(specHash({ ...spec, [field]: changed }, settings), base, `${field} does`)
  }
  t.not(specHash(spec, { ...settings, publish_address: '0.0.0.0' }), base, 'so does the publish address')
})

t.test('image tags and local names; memory sizes', async t => {
  t.equal(imageTag('busybox'), 'latest')
  t.equal(imageTag('127.0.0.1:5000/app'), 'latest', 'a registry port is not a tag')
  t.equal(imageTag('127.0.0.1:5000/app:2'), '2')
  t.equal(imageTag('app@sha256:abc'), undefined)
  t.equal(localImageName('docker.io/library/busybox'), 'busybox:latest')
  t.equal(localImageName('127.0.0.1:5000/app'), '127.0.0.1:5000/app:latest')
  t.equal(localImageName('127.0.0.1:5000/app:2'), '127.0.0.1:5000/app:2')
  t.equal(parseMemory('512m'), 512 * 1024 ** 2)
  t.equal(parseMemory('1.5GiB'), 1.5 * 1024 ** 3)
  t.equal(parseMemory('256MB'), 256 * 1024 ** 2)
  t.equal(parseMemory('100'), 100)
  t.equal(parseMemory('1x'), undefined)
})
