// etcd for masters that share the control plane: [cluster].etcd checked and resolved (one-line errors
// naming the key; the password never appears in one), and an etcd3 client whose every call has a
// deadline derived from the lease TTL, so that nothing waits longer than a leader may go unrenewed.
import { readFileSync } from 'node:fs'
import type { Etcd3 } from 'etcd3'
import { StartupError } from '../../kernel/index.js'
import { readToml } from '../../kernel/runtime-api.js'
import { clusterSection, type ClusterConfig } from './config.js'

export interface EtcdSettings {
  /** Client URLs, all http:// or all https://. */
  endpoints: string[]
  /** TLS material read from the files (https endpoints with ca_file). */
  credentials?: { rootCertificate: Buffer, certChain?: Buffer, privateKey?: Buffer }
  auth?: { username: string, password: string }
  /** Prefix of every key, ending in '/'. */
  prefix: string
  leaseTtlSeconds: number
}

function problem (key: string, text: string): StartupError {
  return new StartupError(`[cluster].etcd.${key}: ${text}`)
}

/** The scheme of an endpoint (http or https), or a one-line refusal naming it. */
function schemeOf (endpoint: string, index: number): string {
  const url = URL.canParse(endpoint) ? new URL(endpoint) : undefined
  const bare = url !== undefined && url.port !== '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.username === ''
  if (url === undefined || !['http:', 'https:'].includes(url.protocol) || !bare) {
    throw problem(`endpoints[${index}]`, `expected http://host:port or https://host:port, got ${JSON.stringify(endpoint)}`)
  }
  return url.protocol
}

function readPem (key: 'ca_file' | 'cert_file' | 'key_file', path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (err) {
    throw problem(key, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
}

/** [cluster].etcd resolved, or undefined when no endpoints are set; a StartupError names what is wrong. */
export function etcdSettings (config: Pick<ClusterConfig, 'name' | 'etcd'>): EtcdSettings | undefined {
  const etcd = config.etcd
  if (etcd.endpoints.length === 0) return undefined
  const schemes = new Set(etcd.endpoints.map(schemeOf))
  if (schemes.size > 1) throw problem('endpoints', 'mixes http:// and https:// (all members are reached the same way)')
  const tls = schemes.has('https:')
  for (const key of ['ca_file', 'cert_file', 'key_file'] as const) {
    if (etcd[key] !== '' && !tls) throw problem(key, 'is set but the endpoints are http://')
  }
  if ((etcd.cert_file === '') !== (etcd.key_file === '')) {
    const [set, missing] = etcd.cert_file === '' ? ['key_file', 'cert_file'] : ['cert_file', 'key_file']
    throw problem(set, `is set without ${missing} (both or neither)`)
  }
  if (etcd.cert_file !== '' && etcd.ca_file === '') throw problem('cert_file', 'needs ca_file (the CA of the members\' certificates)')
  if (etcd.username !== '' && etcd.password === '') throw problem('username', 'needs a password ([cluster].etcd.password or BERTH_ETCD_PASSWORD)')
  if (etcd.username === '' && etcd.password !== '') throw problem('password', 'is set without a username')
  if (etcd.prefix !== '' && !etcd.prefix.startsWith('/')) throw problem('prefix', `must start with "/", got ${JSON.stringify(etcd.prefix)}`)
  const prefix = etcd.prefix === '' ? `/berth/${config.name === '' ? 'default' : config.name}/` : etcd.prefix
  return {
    endpoints: [...etcd.endpoints],
    credentials: etcd.ca_file === ''
      ? undefined
      : {
          rootCertificate: readPem('ca_file', etcd.ca_file),
          ...(etcd.cert_file === '' ? {} : { certChain: readPem('cert_file', etcd.cert_file), privateKey: readPem('key_file', etcd.key_file) })
        },
    auth: etcd.username === '' ? undefined : { username: etcd.username, password: etcd.password },
    prefix: prefix.endsWith('/') ? prefix : `${prefix}/`,
    leaseTtlSeconds: etcd.lease_ttl_seconds
  }
}

/**
 * [cluster].etcd of `configFile` (and BERTH_ETCD_PASSWORD) for a command that runs without a server,
 * checked as the server checks it; undefined when no endpoints are set.
 */
export async function configuredEtcd (configFile: string | undefined, env: NodeJS.ProcessEnv): Promise<EtcdSettings | undefined> {
  const [{ Type }, { Value }] = await Promise.all([import('@sinclair/typebox'), import('@sinclair/typebox/value')])
  const raw = (configFile === undefined ? {} : readToml(configFile).cluster) ?? {}
  const schema = clusterSection(Type)
  const config = Value.Default(schema, structuredClone(raw)) as ClusterConfig
  if (env.BERTH_ETCD_PASSWORD !== undefined && env.BERTH_ETCD_PASSWORD !== '') config.etcd.password = env.BERTH_ETCD_PASSWORD
  const problem = Value.Errors(schema, config).First()
  if (problem !== undefined) throw new StartupError(`${configFile ?? 'defaults'}: [cluster]${problem.path.replaceAll('/', '.')}: ${problem.message}`)
  return etcdSettings(config)
}

/**
 * Milliseconds between a holder's lease renewals (and campaign attempts), and the deadline of each
 * call to etcd: a fifth of the TTL (1 s at the default 5 s).
 */
export function renewIntervalMs (settings: Pick<EtcdSettings, 'leaseTtlSeconds'>): number {
  return settings.leaseTtlSeconds * 1000 / 5
}

/**
 * A client of the members; each unary call gives up after `renewIntervalMs` (streams have no
 * deadline). After three failed calls in a row a member is rested for `renewIntervalMs / 2` (etcd3's
 * default is 5 s): while the members elect a new raft leader every member fails calls, and resting
 * them all for 5 s would outlast a leader's lease; rested briefly, calls go through again within half
 * a second of the election.
 */
export async function etcdClient (settings: EtcdSettings): Promise<Etcd3> {
  const [{ Etcd3, isRecoverableError }, { circuitBreaker, ConsecutiveBreaker, handleWhen }] = await Promise.all([import('etcd3'), import('cockatiel')])
  const deadlineMs = renewIntervalMs(settings)
  return new Etcd3({
    hosts: settings.endpoints,
    credentials: settings.credentials,
    auth: settings.auth,
    dialTimeout: deadlineMs,
    defaultCallOptions: context => context.isStream ? {} : { deadline: Date.now() + deadlineMs },
    faultHandling: { host: () => circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: deadlineMs / 2, breaker: new ConsecutiveBreaker(3) }) }
  })
}
