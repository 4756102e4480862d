// The host of `berth server`: it runs one kernel at a time and can restart the server in place. A
// restart reads the configuration again (refused, with nothing changed, when it is bad), stops the
// running kernel, and starts a new one from it in the same process, while the listening sockets stay
// bound (acceptors.ts): connections that arrive in between wait and are served by the new kernel.
// What plugins run outside the process runs on; the new kernel's plugins take it up as after any restart.
import { Acceptors } from './acceptors.js'
import { BadRequest, Conflict, messageOf } from './errors.js'
import { createKernel, type Kernel, type KernelOptions } from './kernel.js'

export interface HostOptions {
  /** Neither the new kernel nor the previous one could start after a restart: the process must end. */
  fatal(err: unknown): void
}

export class ServerHost {
  readonly #options: KernelOptions
  readonly #host: HostOptions
  readonly #acceptors = new Acceptors()
  #kernel: Kernel | undefined
  #switching: Promise<void> | undefined
  #stopped = false

  /** `options` are read again at each restart (the configuration file with them). */
  constructor (options: Omit<KernelOptions, 'acceptors' | 'restart'>, host: HostOptions) {
    this.#options = options
    this.#host = host
  }

  /** The kernel running now. */
  get kernel (): Kernel {
    if (this.#kernel === undefined) throw new Error('the server has not started')
    return this.#kernel
  }

  async #create (): Promise<Kernel> {
    return await createKernel({ ...this.#options, acceptors: this.#acceptors, restart: async () => { await this.restart() } })
  }

  async start (): Promise<Kernel> {
    const kernel = await this.#create()
    try {
      await kernel.start()
    } catch (err) {
      this.#acceptors.closeAll()
      throw err
    }
    this.#kernel = kernel
    return kernel
  }

  /**
   * Read the configuration again and schedule the switch to a kernel built from it, which begins
   * once the caller's current work (the request asking for it) has returned. Throws BadRequest for
   * a configuration the server cannot use, Conflict while stopping or during another restart.
   */
  async restart (): Promise<void> {
    const current = this.kernel
    if (this.#stopped) throw new Conflict('the server is stopping')
    if (this.#switching !== undefined) throw new Conflict('a restart is already in progress')
    let next: Kernel
    try {
      next = await this.#create()
    } catch (err) {
      throw new BadRequest(`not restarted, the configuration cannot be used: ${messageOf(err)}`, { cause: err })
    }
    if (next.config.stateDir !== current.config.stateDir) {
      throw new BadRequest(`not restarted: [server].state_dir changed (${current.config.stateDir} → ${next.config.stateDir}); stop the server and start it again to move its state`)
    }
    this.#switching = new Promise<void>(resolve => { setImmediate(resolve) })
      .then(async () => { await this.#switch(current, next) })
      .finally(() => { this.#switching = undefined })
  }

  async #switch (current: Kernel, next: Kernel): Promise<void> {
    current.log.info('restarting: stopping every plugin; listeners stay bound')
    await current.stop({ restarting: true })
    try {
      await next.start()
      this.#kernel = next
      next.log.info({ plugins: next.pluginNames }, 'restarted with the configuration read again')
    } catch (err) {
      current.log.error({ err: messageOf(err) }, 'the restarted server did not start; starting the previous configuration again')
      const again = current.renewed()
      try {
        await again.start()
        this.#kernel = again
      } catch (fatal) {
        current.log.fatal({ err: messageOf(fatal) }, 'the previous configuration did not start either')
        this.#acceptors.closeAll()
        this.#host.fatal(fatal)
        return
      }
    }
    this.#acceptors.closeExcept(new Set(this.kernel.listenerNames))
  }

  /** Close the listening sockets and stop the kernel running (after a restart in progress). */
  async stop (): Promise<void> {
    this.#stopped = true
    // No new connections from now on: those open are answered while the kernel drains them.
    this.#acceptors.closeAll()
    await this.#switching
    await this.#kernel?.stop()
    this.#acceptors.closeAll()
  }
}
