// Proves the Docker helpers of test/support against the real engine: daemon, local images, a container
// answering HTTP on a port published on 127.0.0.1, and push/pull through a local registry.
import t from 'tap'
import { requireComponent } from '../support/component.js'
import {
  BUSYBOX_IMAGE, HTTPD_INDEX, HTTPD_PORT, busyboxImage, dockerEngine, httpdImage, loopbackPort,
  publishedPort, pullImage, pushImage, runContainer, startRegistry
} from '../support/docker.js'
import { pollUntil } from '../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('the engine answers', async t => {
    const info = await docker.info() as { ServerVersion?: string }
    t.match(info.ServerVersion, /^\d+\.\d+/, 'the daemon reports a server version')
  })

  t.test('the busybox image is built locally', async t => {
    t.equal(await busyboxImage(docker), BUSYBOX_IMAGE)
    const image = await docker.getImage(BUSYBOX_IMAGE).inspect()
    t.same(image.Config.Cmd, ['/bin/busybox', 'sh'], 'its CMD is busybox sh')
  })

  t.test('an httpd container answers on a port published on 127.0.0.1', async t => {
    const container = await runContainer(t, docker, {
      Image: await httpdImage(docker),
      HostConfig: { PortBindings: loopbackPort(HTTPD_PORT) }
    })
    const port = await publishedPort(container, HTTPD_PORT)
    t.ok(port > 0, `published on 127.0.0.1:${port}`)
    const page = await pollUntil(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/`)
      return response.status === 200 && await response.text()
    }, { timeout: 10_000, what: 'the httpd page' })
    t.equal(page, HTTPD_INDEX, 'the page served is the image\'s index.html')
  })

  t.test('an image goes through a local registry and back', async t => {
    const registry = await startRegistry(t)
    const v2 = await fetch(`${registry.url}/v2/`)
    t.equal(v2.status, 200, 'the registry answers /v2/')

    await busyboxImage(docker)
    const repo = `${registry.host}/berth-test/busybox`
    const ref = `${repo}:1`
    await docker.getImage(BUSYBOX_IMAGE).tag({ repo, tag: '1' })
    // The tag is removed and pulled back below: it may be absent here if an assertion in between failed.
    t.teardown(async () => { await docker.getImage(ref).remove().catch(() => undefined) })

    await pushImage(docker, ref)
    const tags = await (await fetch(`${registry.url}/v2/berth-test/busybox/tags/list`)).json() as { tags?: string[] }
    t.same(tags.tags, ['1'], 'the registry lists the pushed tag')

    await docker.getImage(ref).remove()
    await t.rejects(docker.getImage(ref).inspect(), 'the local tag is gone')

    await pullImage(docker, ref)
    const pulled = await docker.getImage(ref).inspect()
    const original = await docker.getImage(BUSYBOX_IMAGE).inspect()
    t.equal(pulled.Id, original.Id, 'the pulled image is the one pushed')

    await t.rejects(pullImage(docker, `${repo}:absent`), /absent|not found|unknown/i, 'pulling a missing tag fails')
  })

  t.test('a push error that arrives inside the progress stream is reported', async t => {
    // Nothing listens on port 1: the engine accepts the push (HTTP 200), then reports the failure in the stream.
    const repo = `127.0.0.1:1/berth-test/push-error-${process.pid}`
    const ref = `${repo}:1`
    await docker.getImage(await busyboxImage(docker)).tag({ repo, tag: '1' })
    t.teardown(async () => { await docker.getImage(ref).remove() })
    await t.rejects(pushImage(docker, ref), /connection refused/, 'pushImage rejects')
  })
}
