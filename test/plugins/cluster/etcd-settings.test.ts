// [cluster].etcd: defaults, the schema's refusals through the kernel's configuration loader, the
// password from BERTH_ETCD_PASSWORD (never in a message), and the checks across keys at start.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../../kernel/config.js'
import cluster from '../../../plugins/cluster/index.js'
import type { ClusterConfig } from '../../../plugins/cluster/config.js'
import { etcdSettings } from '../../../plugins/cluster/etcd.js'
import { tempDir } from '../../support/tmp.js'

const load = (etcd: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): ClusterConfig =>
  loadConfig({ raw: { cluster: { name: 'prod', etcd } }, env, cwd: '/srv' }, [cluster]).sections.get('cluster') as ClusterConfig

t.test('defaults: no endpoints, no etcd; a TTL of 5 s', async t => {
  const config = load({})
  t.same(config.etcd, { endpoints: [], ca_file: '', cert_file: '', key_file: '', username: '', password: '', prefix: '', lease_ttl_seconds: 5 })
  t.equal(etcdSettings(config), undefined)
  t.match(etcdSettings(load({ endpoints: ['http://127.0.0.1:2379'] })), { endpoints: ['http://127.0.0.1:2379'], prefix: '/berth/prod/', leaseTtlSeconds: 5, credentials: undefined, auth: undefined })
  t.equal(etcdSettings({ name: '', etcd: { ...config.etcd, endpoints: ['http://a:1'] } })?.prefix, '/berth/default/', 'a cluster without a name')
  t.equal(etcdSettings(load({ endpoints: ['http://a:1'], prefix: '/x/y' }))?.prefix, '/x/y/', 'a prefix ends in /')
})

t.test('the schema refuses, in one line naming the key', async t => {
  t.throws(() => load({ lease_ttl_seconds: 1 }), { message: 'config: [cluster].etcd.lease_ttl_seconds: expected integer to be greater or equal to 2, got 1' })
  t.throws(() => load({ lease_ttl_seconds: 2.5 }), { message: 'config: [cluster].etcd.lease_ttl_seconds: expected integer, got 2.5' })
  t.throws(() => load({ endpoints: 'http://a:1' }), { message: /^config: \[cluster\]\.etcd\.endpoints: expected array/ })
  t.throws(() => load({ ttl: 5 }), { message: 'config: [cluster].etcd.ttl: unknown key' })
})

t.test('the password from BERTH_ETCD_PASSWORD, never in a message', async t => {
  const secret = 's3cr3t-value'
  const config = load({ endpoints: ['http://a:1'], username: 'berth' }, { BERTH_ETCD_PASSWORD: secret })
  t.same(etcdSettings(config)?.auth, { username: 'berth', password: secret })
  const refused = (() => {
    try {
      etcdSettings(load({ endpoints: ['http://a:1'] }, { BERTH_ETCD_PASSWORD: secret }))
    } catch (err) {
      return (err as Error).message
    }
  })()
  t.equal(refused, '[cluster].etcd.password: is set without a username')
  t.notMatch(refused, secret)
})

t.test('checks across keys at start, one line each', async t => {
  const dir = tempDir(t)
  const pem = (name: string): string => {
    const path = join(dir, name)
    writeFileSync(path, `-----BEGIN ${name}-----\n`)
    return path
  }
  const refusals: Array<[Record<string, unknown>, string]> = [
    [{ endpoints: ['127.0.0.1:2379'] }, '[cluster].etcd.endpoints[0]: expected http://host:port or https://host:port, got "127.0.0.1:2379"'],
    [{ endpoints: ['http://a:1', 'http://b'] }, '[cluster].etcd.endpoints[1]: expected http://host:port or https://host:port, got "http://b"'],
    [{ endpoints: ['http://a:1/v3'] }, '[cluster].etcd.endpoints[0]: expected http://host:port or https://host:port, got "http://a:1/v3"'],
    [{ endpoints: ['http://a:1', 'https://b:1'] }, '[cluster].etcd.endpoints: mixes http:// and https:// (all members are reached the same way)'],
    [{ endpoints: ['http://a:1'], ca_file: pem('ca') }, '[cluster].etcd.ca_file: is set but the endpoints are http://'],
    [{ endpoints: ['https://a:1'], ca_file: pem('ca'), cert_file: pem('cert') }, '[cluster].etcd.cert_file: is set without key_file (both or neither)'],
    [{ endpoints: ['https://a:1'], cert_file: pem('cert'), key_file: pem('key') }, '[cluster].etcd.cert_file: needs ca_file (the CA of the members\' certificates)'],
    [{ endpoints: ['https://a:1'], ca_file: join(dir, 'missing') }, `[cluster].etcd.ca_file: cannot read ${join(dir, 'missing')} (ENOENT)`],
    [{ endpoints: ['http://a:1'], username: 'berth' }, '[cluster].etcd.username: needs a password ([cluster].etcd.password or BERTH_ETCD_PASSWORD)'],
    [{ endpoints: ['http://a:1'], prefix: 'berth/' }, '[cluster].etcd.prefix: must start with "/", got "berth/"']
  ]
  for (const [etcd, message] of refusals) t.throws(() => etcdSettings(load(etcd)), { message }, message)
  const tls = etcdSettings(load({ endpoints: ['https://a:1', 'https://b:1'], ca_file: pem('ca'), cert_file: pem('cert'), key_file: pem('key') }))
  t.same(Object.keys(tls?.credentials ?? {}).sort(), ['certChain', 'privateKey', 'rootCertificate'])
  t.equal(tls?.credentials?.rootCertificate.toString(), '-----BEGIN ca-----\n')
})
