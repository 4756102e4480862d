// Database images for the `db create` tests, built locally from Debian's packages (no image can be
// pulled here) with the conventions of the official postgres and redis images: binaries with the
// shared libraries they load, busybox for a shell, and for postgres an entrypoint that initialises
// the data directory from POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB and runs as user 999.
import { execFile } from 'node:child_process'
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type Docker from 'dockerode'
import { ensureDebianPackages } from './component.js'
import { ensureImage } from './docker.js'

const run = promisify(execFile)

export const POSTGRES_TEST_IMAGE = 'berth-test/postgres:15'
export const REDIS_TEST_IMAGE = 'berth-test/redis:7'
const PG = '/usr/lib/postgresql/15'

/** Copy `file` (following links) to the same path under `root`, with the shared libraries it loads. */
async function placeBinary (root: string, file: string, as = file): Promise<void> {
  place(root, realpathSync(file), as)
  const { stdout } = await run('ldd', [file])
  for (const line of stdout.split('\n')) {
    const path = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1]
    if (path !== undefined) place(root, realpathSync(path), path)
  }
}

function place (root: string, source: string, as: string): void {
  const target = join(root, as)
  if (existsSync(target)) return
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(source, target)
  chmodSync(target, 0o755)
}

function busybox (root: string, applets: string[]): void {
  place(root, '/bin/busybox', '/bin/busybox')
  for (const applet of applets) symlinkSync('busybox', join(root, 'bin', applet))
  mkdirSync(join(root, 'tmp'), { mode: 0o1777 })
  chmodSync(join(root, 'tmp'), 0o1777)
}

const POSTGRES_ENTRYPOINT = `#!/bin/sh
# Initialise the data directory on first start, as the official image does, then run postgres.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "$POSTGRES_PASSWORD" > /tmp/pwfile
  initdb -D "$PGDATA" -U "\${POSTGRES_USER:-postgres}" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "CREATE DATABASE \\"\${POSTGRES_DB:-\${POSTGRES_USER:-postgres}}\\";" | postgres --single -D "$PGDATA" postgres >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
`

/** berth-test/postgres:15, from Debian's postgresql-15 (its main cluster never created on the host). */
export async function postgresImage (docker: Docker): Promise<string> {
  // Debian's postgresql-common would create and start a cluster on the host; this turns that off.
  mkdirSync('/etc/postgresql-common', { recursive: true })
  if (!existsSync('/etc/postgresql-common/createcluster.conf')) writeFileSync('/etc/postgresql-common/createcluster.conf', 'create_main_cluster = false\n')
  await ensureDebianPackages(['postgresql-15', 'postgresql-client-15', 'busybox-static'])
  return await ensureImage(docker, POSTGRES_TEST_IMAGE, async root => {
    busybox(root, ['sh', 'cat', 'rm', 'printf', 'echo'])
    for (const name of ['postgres', 'initdb', 'pg_ctl', 'pg_isready', 'pg_dump', 'psql']) await placeBinary(root, `${PG}/bin/${name}`)
    for (const lib of readdirSync(`${PG}/lib`).filter(f => f.endsWith('.so'))) await placeBinary(root, `${PG}/lib/${lib}`)
    cpSync('/usr/share/postgresql/15', join(root, 'usr/share/postgresql/15'), { recursive: true })
    cpSync('/usr/share/zoneinfo', join(root, 'usr/share/zoneinfo'), { recursive: true })
    mkdirSync(join(root, 'etc'), { recursive: true })
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh\n')
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\npostgres:x:999:\n')
    for (const dir of ['var/lib/postgresql/data', 'var/run/postgresql']) {
      mkdirSync(join(root, dir), { recursive: true })
      chownSync(join(root, dir), 999, 999)
    }
    chownSync(join(root, 'var/lib/postgresql'), 999, 999)
    writeFileSync(join(root, 'entrypoint.sh'), POSTGRES_ENTRYPOINT, { mode: 0o755 })
    return [
      `ENV PATH=${PG}/bin:/bin`, 'ENV PGDATA=/var/lib/postgresql/data', 'USER 999', 'EXPOSE 5432',
      'ENTRYPOINT ["/entrypoint.sh"]'
    ]
  })
}

/** berth-test/redis:7, from Debian's redis-server and redis-tools. */
export async function redisImage (docker: Docker): Promise<string> {
  await ensureDebianPackages(['redis-server', 'redis-tools', 'busybox-static'])
  return await ensureImage(docker, REDIS_TEST_IMAGE, async root => {
    busybox(root, ['sh', 'grep'])
    await placeBinary(root, '/usr/bin/redis-server')
    await placeBinary(root, '/usr/bin/redis-cli')
    mkdirSync(join(root, 'data'))
    return ['ENV PATH=/usr/bin:/bin', 'EXPOSE 6379', 'CMD ["redis-server"]']
  })
}
