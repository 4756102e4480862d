// What a plugin's commands() receives: the commander program and helpers to reach a running server.
import type { Command } from 'commander'
import type { AnyPlugin } from '../plugin.js'

export interface CliSettings {
  /** Absolute state directory: pid file, log file, tokens. */
  readonly stateDir: string
  /** Base URL of the control listener, e.g. http://127.0.0.1:6880 (env BERTH_URL overrides). */
  readonly controlUrl: URL
  /** Base URL of the control listener and of each listener of the plugins loaded for the command, its own (env BERTH_<NAME>_URL overrides), e.g. telemetry → http://127.0.0.1:6881. */
  readonly urls: Readonly<Record<string, URL>>
  /** The cluster.toml in use, if any. */
  readonly configFile?: string
}

/** An option of `berth server` that a plugin adds: it sets one environment variable of the server it starts. */
export interface ServerOption {
  /** commander's flags, with a value (`--join <host:port>`) or without (`--dev`: the variable is set to `true`). */
  flags: string
  description: string
  /** The variable it sets, one the plugin claims in its definition's `env`. */
  variable: string
}

export interface CliRegistry {
  /** The root `berth` command; add subcommands with `program.command(...)`. */
  readonly program: Command
  /** Settings resolved from the global options, the environment and cluster.toml. */
  settings(): Promise<CliSettings>
  /** Add an option to `berth server` (in the foreground and with -d) that sets one of the plugin's environment variables. */
  serverOption(option: ServerOption): void
  /** The options of `berth server` that the plugins add (every plugin's commands are read for it). */
  serverOptions(): Promise<readonly ServerOption[]>
  /** The global options again (state directory, config file) for a process started later; `stateDirSuffix` makes a state directory of its own. */
  globalArgs(stateDirSuffix?: string): Promise<string[]>
  /** Every plugin definition found, enabled or not, in discovery order (a command may run with only its own plugin's loaded: this loads them all). */
  plugins(): Promise<readonly AnyPlugin[]>
  /** Absolute path of the script of the `berth` command, to run it again (a unit, a detached server). */
  readonly script: string
}

/** Thrown by a command for bad arguments: one line on stderr and exit code 2. */
export class UsageError extends Error {}
