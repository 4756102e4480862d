// A real ACME server for tests: Debian's pebble, with pebble-challtestsrv answering DNS so that every
// made-up name resolves to 127.0.0.1. pebble's own HTTPS listener gets a certificate from a CA made
// here with openssl; HTTP-01 challenges are validated against the given port (the proxy's HTTP
// listener). Both daemons belong to the test that starts them. `restart()` starts pebble again on the
// same ports with the same listener certificate and fresh state (it keeps everything in memory): a
// reset ACME server that knows no account and issues from a new root.
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ensureDebianPackages } from './component.js'
import { startDaemon, type Daemon } from './daemon.js'
import { probablyFreePort } from './net.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

const run = promisify(execFile)

export interface Pebble {
  /** The ACME directory URL. */
  directory: string
  /** PEM of the CA that signed pebble's own HTTPS certificate: trust it to reach the directory. */
  caFile: string
  /** PEM of the root that issues certificates (new at every start): trust it to verify them. */
  issuingRoot(): Promise<string>
  /** Stop pebble and start it again with fresh state. */
  restart(): Promise<void>
}

/** openssl: a CA, and a certificate for localhost / 127.0.0.1 signed by it. */
async function listenerCertificate (dir: string): Promise<{ ca: string, cert: string, key: string }> {
  const file = (name: string): string => join(dir, name)
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=berth test CA'])
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('key.pem'), '-out', file('csr.pem'), '-subj', '/CN=localhost'])
  writeFileSync(file('san.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n')
  await run('openssl', ['x509', '-req', '-in', file('csr.pem'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('cert.pem'), '-days', '2', '-extfile', file('san.cnf')])
  return { ca: file('ca.pem'), cert: file('cert.pem'), key: file('key.pem') }
}

/** The directory URL pebble serves on `port`. */
export function pebbleDirectory (port: number): string {
  return `https://127.0.0.1:${port}/dir`
}

async function httpsGet (url: string, ca: string): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    request(url, { agent: new Agent({ ca }) }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }) })
    }).on('error', reject).end()
  })
}

/** Start pebble validating HTTP-01 challenges on 127.0.0.1:`httpPort`; its directory on `acmePort` if given. */
export async function startPebble (t: Teardown, httpPort: number, acmePort?: number): Promise<Pebble> {
  await ensureDebianPackages(['pebble', 'openssl'])
  const dir = tempDir(t, 'berth-pebble-')
  const certs = await listenerCertificate(dir)
  const [directoryPort, managementPort, dnsPort, challengeManagement, tlsPort] = await Promise.all([acmePort ?? probablyFreePort(), probablyFreePort(), probablyFreePort(), probablyFreePort(), probablyFreePort()])
  await startDaemon(t, 'pebble-challtestsrv', {
    command: 'pebble-challtestsrv',
    args: ['-dns01', `127.0.0.1:${dnsPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${challengeManagement}`, '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''],
    logFile: join(dir, 'challtestsrv.log'),
    ready: async () => (await fetch(`http://127.0.0.1:${challengeManagement}/`)).status > 0
  })
  const config = join(dir, 'pebble.json')
  writeFileSync(config, JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${directoryPort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: certs.cert,
      privateKey: certs.key,
      httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false
    }
  }))
  const ca = readFileSync(certs.ca, 'utf8')
  const directory = pebbleDirectory(directoryPort)
  let starts = 0
  const start = async (): Promise<Daemon> => await startDaemon(t, 'pebble', {
    command: 'pebble',
    args: ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`],
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1' },
    logFile: join(dir, `pebble-${++starts}.log`),
    ready: async () => (await httpsGet(directory, ca)).status === 200
  })
  let pebble = await start()
  return {
    directory,
    caFile: certs.ca,
    issuingRoot: async () => (await httpsGet(`https://127.0.0.1:${managementPort}/roots/0`, ca)).body,
    restart: async () => {
      await pebble.stop()
      pebble = await start()
    }
  }
}
