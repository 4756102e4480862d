// The database engines `berth db create` deploys, each as a service file: the image's conventions
// (the official postgres and redis images), a volume for its data, a health check the engine runs,
// a backup pre_hook that dumps into that volume, and the password as a secret reference.
export const ENGINES = ['postgres', 'redis'] as const
export type Engine = typeof ENGINES[number]

export interface EngineService {
  /** The service.toml text. */
  file: string
  /** The connection string, for a password and the published address. */
  connection(password: string, address: string): string
}

const toml = (value: string): string => JSON.stringify(value)

export function engineService (engine: Engine, name: string, image: string, secret: string): EngineService {
  const head = `# Made by berth db create ${engine} ${name}. The password is the secret ${secret}.\n[[service]]\nname = ${toml(name)}\nimage = ${toml(image)}\n`
  if (engine === 'postgres') {
    return {
      file: head + [
        'port = 5432',
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
        ''
      ].join('\n'),
      connection: (password, address) => `postgres://app:${encodeURIComponent(password)}@${address}/app`
    }
  }
  return {
    file: head + [
      'port = 6379',
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
      ''
    ].join('\n'),
    connection: (password, address) => `redis://default:${encodeURIComponent(password)}@${address}/0`
  }
}
