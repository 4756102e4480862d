// Registry credentials from the engine's credential file: which registry an image comes from, and the
// login `docker login` stored for it (the engine needs them passed with each pull).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { credentialsFor, dockerConfigFile, readDockerConfig, registryOf } from '../../../plugins/reconciler/registry-auth.js'
import { tempDir } from '../../support/tmp.js'

const auth = (user: string, password: string): { auth: string } => ({ auth: Buffer.from(`${user}:${password}`).toString('base64') })

t.test('the registry of a reference', async t => {
  t.equal(registryOf('busybox:1'), 'docker.io')
  t.equal(registryOf('library/busybox'), 'docker.io')
  t.equal(registryOf('reg.example.com/team/app:2'), 'reg.example.com')
  t.equal(registryOf('127.0.0.1:5000/app'), '127.0.0.1:5000')
  t.equal(registryOf('localhost/app'), 'localhost')
})

t.test('credentials are found by registry host, Docker Hub under its historic key', async t => {
  const config = {
    auths: {
      'https://index.docker.io/v1/': auth('hubuser', 'hubpass'),
      'reg.example.com': auth('ci', 'p:with:colons'),
      'https://127.0.0.1:5000': auth('local', 'x'),
      'broken.example.com': { auth: 42 }
    }
  }
  t.same(credentialsFor('busybox:1', config), { username: 'hubuser', password: 'hubpass', serveraddress: 'https://index.docker.io/v1/' })
  t.same(credentialsFor('reg.example.com/team/app:2', config), { username: 'ci', password: 'p:with:colons', serveraddress: 'reg.example.com' })
  t.same(credentialsFor('127.0.0.1:5000/app', config), { username: 'local', password: 'x', serveraddress: 'https://127.0.0.1:5000' })
  t.equal(credentialsFor('broken.example.com/app', config), undefined, 'an entry without a usable auth is skipped')
  t.equal(credentialsFor('other.example.com/app', config), undefined)
  t.equal(credentialsFor('busybox', undefined), undefined, 'no file, no credentials')
})

t.test('the credential file: DOCKER_CONFIG or ~/.docker; absent or broken means none', async t => {
  const dir = tempDir(t)
  t.equal(dockerConfigFile({ DOCKER_CONFIG: dir }), join(dir, 'config.json'))
  t.match(dockerConfigFile({}), /\.docker\/config\.json$/)
  t.equal(readDockerConfig(join(dir, 'config.json')), undefined)
  writeFileSync(join(dir, 'config.json'), '{ not json')
  t.equal(readDockerConfig(join(dir, 'config.json')), undefined)
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { 'reg.example.com': auth('a', 'b') } }))
  t.same(credentialsFor('reg.example.com/x', readDockerConfig(join(dir, 'config.json'))), { username: 'a', password: 'b', serveraddress: 'reg.example.com' })
})
