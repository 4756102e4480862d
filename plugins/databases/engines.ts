// The database engines `berth db create` deploys, each as a service file: the image's conventions
// (the official postgres and redis images), a volume for its data, a health check the engine runs,
// a backup pre_hook that dumps into that volume, and the password as a secret reference. A database
// is internal (never routed by the proxy), pinned to the node that made it (its volume is there),
// and published on a fixed host port recorded in the file, so its address outlives every recreate.
export const ENGINES = ['postgres', 'redis'] as const
export type Engine = typeof ENGINES[number]

/** The port each engine listens on in its container, and the first host port tried when none is asked for. */
export const PORTS: Record<Engine, { container: number, firstHost: number }> = {
  postgres: { container: 5432, firstHost: 15432 },
  redis: { container: 6379, firstHost: 16379 }
}

export interface EngineService {
  /** The service.toml text. */
  file: string
  /** The connection string for a password as it goes into a URL (percent-encoded, or a `${secrets.NAME}` reference) and an address. */
  connection(password: string, address: string): string
}

export interface EngineRequest {
  engine: Engine
  name: string
  image: string
  /** The secret holding the password. */
  secret: string
  /** The host port the database is published on. */
  hostPort: number
  /** The node that runs it. */
  node: string
}

const toml = (value: string): string => JSON.stringify(value)

export function engineService ({ engine, name, image, secret, hostPort, node }: EngineRequest): EngineService {
  const head = [
    `# Made by berth db create ${engine} ${name}. The password is the secret ${secret}.`,
    '[[service]]',
    `name = ${toml(name)}`,
    `image = ${toml(image)}`,
    '# Never routed by the proxy; reached on this fixed host port, and as <name> by services on its node.',
    'internal = true',
    `extra_ports = [${toml(`${hostPort}:${PORTS[engine].container}`)}]`
  ]
  // The data is in a volume of this node: the database stays here.
  const placement = ['[service.placement]', `node = ${toml(node)}`, '']
  if (engine === 'postgres') {
    return {
      file: [
        ...head,
        '',
        '[service.env]',
        'POSTGRES_USER = "app"',
        'POSTGRES_DB = "app"',
        `POSTGRES_PASSWORD = ${toml(`\${secrets.${secret}}`)}`,
        '',
        '[[service.volumes]]',
        'source = "data"',
        'target = "/var/lib/postgresql/data"',
        '',
        '[service.healthcheck]',
        'command = "pg_isready -U app -d app -h 127.0.0.1"',
        'interval_secs = 5',
        'start_period_secs = 30',
        '',
        '[service.backup]',
        'pre_hook = "pg_dump -U app -d app -f /var/lib/postgresql/data/berth-dump.sql"',
        '',
        ...placement
      ].join('\n'),
      connection: (password, address) => `postgres://app:${password}@${address}/app`
    }
  }
  return {
    file: [
      ...head,
      `command = ["sh", "-c", ${toml('exec redis-server --appendonly yes --dir /data --requirepass "$REDIS_PASSWORD"')}]`,
      '',
      '[service.env]',
      `REDIS_PASSWORD = ${toml(`\${secrets.${secret}}`)}`,
      '',
      '[[service.volumes]]',
      'source = "data"',
      'target = "/data"',
      '',
      '[service.healthcheck]',
      `command = ${toml('redis-cli --no-auth-warning -a "$REDIS_PASSWORD" ping | grep -q PONG')}`,
      'interval_secs = 5',
      '',
      '[service.backup]',
      `pre_hook = ${toml('redis-cli --no-auth-warning -a "$REDIS_PASSWORD" save')}`,
      '',
      ...placement
    ].join('\n'),
    connection: (password, address) => `redis://default:${password}@${address}/0`
  }
}
