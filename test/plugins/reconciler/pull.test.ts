// Pull rules against a local registry with an image pushed twice: `latest` is pulled on every deploy
// (and a new image recreates the containers), other tags only when absent, and redeploy always pulls.
import t from 'tap'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { requireComponent } from '../../support/component.js'
import { BUSYBOX_IMAGE, busyboxImage, dockerEngine, pushImage, startRegistry } from '../../support/docker.js'
import { api, instanceContainers, reconcilerKernel, removeRepositoryAtEnd, writeServices } from '../../support/orchestration.js'

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('latest is force-pulled, other tags only when absent; redeploy force-pulls', async t => {
    await busyboxImage(docker)
    const registry = await startRegistry(t)
    const repo = `${registry.host}/berth-test/app`
    const tagAs = async (imageId: string, tag: string): Promise<void> => { await docker.getImage(imageId).tag({ repo, tag }) }
    const untag = async (): Promise<void> => {
      for (const tag of ['latest', '1']) await docker.getImage(`${repo}:${tag}`).remove().catch(() => undefined)
    }
    removeRepositoryAtEnd(t, docker, repo)

    const v1 = (await docker.getImage(BUSYBOX_IMAGE).inspect()).Id
    const draft = await docker.createContainer({ Image: BUSYBOX_IMAGE, Labels: { 'berth.instance': 'pull-test-draft' } })
    const v2 = ((await draft.commit({ changes: 'LABEL berth-test-version=2' })) as { Id: string }).Id
    await draft.remove({ force: true })
    t.teardown(async () => { await docker.getImage(v2).remove({ force: true }).catch(() => undefined) })
    t.not(v2, v1, 'two different images')

    for (const tag of ['latest', '1']) {
      await tagAs(v1, tag)
      await pushImage(docker, `${repo}:${tag}`)
    }
    await untag()

    const { kernel, cwd, instance, token, project } = await reconcilerKernel(t, docker)
    const service = (name: string, tag: string): string => `[[service]]\nname = "${name}"\nimage = "${repo}:${tag}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n`
    writeServices(cwd, { [project]: service('rolling', 'latest') + service('pinned', '1') })
    const imageOf = async (name: string): Promise<string | undefined> => (await instanceContainers(docker, instance)).get(`${project}-${name}-1`)?.ImageID

    const first = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(first.body.errors, [], 'both images were pulled (absent locally)')
    t.equal(await imageOf('rolling'), v1)
    t.equal(await imageOf('pinned'), v1)

    for (const tag of ['latest', '1']) {
      await tagAs(v2, tag)
      await pushImage(docker, `${repo}:${tag}`)
      await tagAs(v1, tag)
    }
    t.equal((await docker.getImage(`${repo}:1`).inspect()).Id, v1, 'the registry has v2; this engine still v1 under both tags')

    const second = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
    t.same(second.body, { deployed: ['rolling', 'pinned'], errors: [], changed: ['rolling'], removed: [] })
    t.equal(await imageOf('rolling'), v2, 'latest was pulled again and its container recreated on the new image')
    t.equal(await imageOf('pinned'), v1, 'a present tag is not pulled')
    t.equal((await docker.getImage(`${repo}:1`).inspect()).Id, v1)

    const redeployed = await api<DeployResult>(kernel, 'POST', '/api/v1/services/pinned/redeploy', { token })
    t.same(redeployed.body, { deployed: ['pinned'], errors: [], changed: ['pinned'], removed: [] })
    t.equal(await imageOf('pinned'), v2, 'redeploy force-pulled')

    const pinnedId = (await instanceContainers(docker, instance)).get(`${project}-pinned-1`)?.Id
    await api(kernel, 'POST', '/api/v1/services/pinned/redeploy', { token })
    t.not((await instanceContainers(docker, instance)).get(`${project}-pinned-1`)?.Id, pinnedId, 'redeploy recreates even when nothing changed')
  })
}
