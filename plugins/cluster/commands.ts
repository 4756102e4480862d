// `berth cluster copy-to-etcd`: move a lone master's control-plane state into etcd, before its
// masters start with [cluster].etcd. (The nodes plugin adds the other `berth cluster` commands.)
import { isAlive, readPid, UsageError, type CliRegistry } from '../../kernel/index.js'

export function clusterCommands (cli: CliRegistry): void {
  const cluster = cli.program.commands.find(command => command.name() === 'cluster') ??
    cli.program.command('cluster').description('the cluster: its nodes and masters')
  cluster.command('copy-to-etcd')
    .description('copy this state directory\'s control-plane state (tokens, secrets, webhooks, services and their history, certificates, the node registry) into the etcd of [cluster].etcd; stop the server first')
    .option('--force', 'copy even when etcd already holds state under the prefix (keys of the same name are overwritten)')
    .action(async (options: { force?: boolean }) => {
      const { stateDir, configFile } = await cli.settings()
      const { configuredEtcd } = await import('./etcd.js')
      const settings = await configuredEtcd(configFile, process.env)
      if (settings === undefined) throw new UsageError(`[cluster].etcd.endpoints is not set${configFile === undefined ? ' (no cluster.toml)' : ` in ${configFile}`}: say where etcd is first`)
      const pid = readPid(stateDir)
      if (pid !== undefined && isAlive(pid)) throw new UsageError(`a server runs on ${stateDir} (pid ${pid}): stop it first, so that nothing it writes later is left behind`)
      const { copyToEtcd, StateAlreadyShared } = await import('./copy-to-etcd.js')
      try {
        const copied = await copyToEtcd(stateDir, settings, options.force === true, line => { console.log(line) })
        console.log(`copied ${copied} key(s) to ${settings.prefix}state/ on ${settings.endpoints.join(', ')}; give every master the same [secrets].key_file, then start them`)
      } catch (err) {
        if (err instanceof StateAlreadyShared) throw new UsageError(err.message)
        throw err
      }
    })
}
