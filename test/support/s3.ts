// A real S3-compatible server on loopback for the backup tests: npm s3rver, storing in a temporary
// directory, with the bucket made. It does not check SigV4 signatures, so wrong credentials cannot be
// tested against it. rclone (Debian) is what Berth talks to it with.
import { createRequire } from 'node:module'
import { ensureDebianPackages } from './component.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

interface S3rverServer {
  run(): Promise<{ port: number }>
  close(): Promise<void>
}
type S3rverClass = new (options: { address: string, port: number, silent: boolean, directory: string, configureBuckets: Array<{ name: string }> }) => S3rverServer

export interface S3Endpoint {
  endpoint: string
  bucket: string
  /** Where s3rver keeps the objects (to look at what was written). */
  directory: string
}

export async function s3Server (t: Teardown, bucket: string): Promise<S3Endpoint> {
  await ensureDebianPackages(['rclone'])
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass
  const directory = tempDir(t, 'berth-s3-')
  // Port 0: run() answers the address it was bound to.
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  const { port } = await server.run()
  t.teardown(async () => { await server.close() })
  return { endpoint: `http://127.0.0.1:${port}`, bucket, directory }
}
