// Proves that more than one Docker engine runs on this machine (the agent nodes of the cluster tests):
// two extra dockerd, each with its own data root, exec root and socket, each building its images
// locally, creating its own bridge network and publishing a container's port on 127.0.0.1; and that
// stopping them leaves no bridge interface, mount or directory behind.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { requireComponent } from '../support/component.js'
import { HTTPD_INDEX, HTTPD_PORT, httpdImage, loopbackPort, publishedPort } from '../support/docker.js'
import { extraEngine } from '../support/engines.js'
import { pollUntil } from '../support/poll.js'

function bridges (): string[] {
  return execFileSync('ip', ['-o', 'link', 'show', 'type', 'bridge']).toString().split('\n').filter(l => l !== '').map(l => l.split(': ')[1])
}

t.test('two more engines side by side, each serving a container on 127.0.0.1', async t => {
  const before = bridges()
  const engines = await requireComponent(t, 'two extra dockerd', async () => await Promise.all([extraEngine(t, 'a'), extraEngine(t, 'b')]))
  if (engines === undefined) return
  const ports: number[] = []
  for (const engine of engines) {
    const info = await engine.docker.info() as { DockerRootDir: string, ServerVersion: string }
    t.equal(info.DockerRootDir, `${engine.dir}/data`, 'its own data root')
    await engine.docker.createNetwork({ Name: 'berth-test', Driver: 'bridge' })
    // Removed with the engine's other containers when it stops.
    const container = await engine.docker.createContainer({
      Image: await httpdImage(engine.docker),
      HostConfig: { NetworkMode: 'berth-test', PortBindings: loopbackPort(HTTPD_PORT) }
    })
    await container.start()
    ports.push(await publishedPort(container, HTTPD_PORT))
  }
  t.not(ports[0], ports[1], 'each engine publishes on a port of its own')
  for (const port of ports) {
    const page = await pollUntil(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/`)
      return response.status === 200 && await response.text()
    }, { timeout: 10_000, what: `httpd on ${port}` })
    t.equal(page, HTTPD_INDEX)
  }
  const [a, b] = engines
  t.equal((await a.docker.listContainers()).length, 1, 'each engine sees only its own containers')
  t.equal((await b.docker.listContainers()).length, 1)

  for (const engine of engines) await engine.stop()
  t.same(bridges().filter(name => !before.includes(name)), [], 'no bridge interface is left behind')
  const mounts = readFileSync('/proc/mounts', 'utf8')
  t.notOk(mounts.includes(`${a.dir}/`) || mounts.includes(`${b.dir}/`), 'no mount is left behind')
  t.notOk(existsSync(a.dir) || existsSync(b.dir), 'their directories are gone')
})
