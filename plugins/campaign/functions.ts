// Declarative server functions: each names itself, its module, who may call it, the schema of its
// arguments and its handler. The registry refuses duplicate names, validates arguments, adds the
// generative provider's fallback note to a result that needed one, and takes the attribution fields
// out of results for roles that may not see them (people.ts).
import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { BadRequest, NotFound } from '../../kernel/index.js'
import { actingAs } from './audit.js'
import { collectingFallbackNotes } from './language/generator.js'
import { hideAttribution } from './people.js'
import { mayCall, type Role } from './roles.js'
import type { SessionRecord } from './sessions.js'
import { CAMPAIGN_CODES } from './errors.js'

/** Functions every module shares (record-feedback, check-auth) carry this module id; it is not a page. */
export const SHARED_MODULE = 'shared'

export interface Caller {
  /** The caller's session; always present except for public functions. */
  session?: SessionRecord
}

export interface ServerFunction<A extends TSchema = TSchema> {
  /** The endpoint name: `POST /api/{name}`. */
  name: string
  /** The module the function belongs to (the UI shows a module when its role may call one of its functions). */
  module: string
  /** `public`, or the roles that may call it besides admin, who may call every function. */
  access: 'public' | readonly Role[]
  args: A
  /** Largest request body in bytes, when more than [campaign].max_request_bytes (a file's import). */
  maxRequestBytes?: number
  handler(args: Static<A>, caller: Caller): unknown
}

/** Declare a server function, keeping the argument type of the handler tied to its schema. */
export function serverFunction<A extends TSchema> (fn: ServerFunction<A>): ServerFunction {
  return fn as unknown as ServerFunction
}

/** A module's server function as its module declares it: its module and roles come from the module's manifest. */
export type ModuleFunction<A extends TSchema = TSchema> = Omit<ServerFunction<A>, 'module' | 'access'>

/** Declare a module's server function, keeping the argument type of the handler tied to its schema. */
export function moduleFunction<A extends TSchema> (fn: ModuleFunction<A>): ModuleFunction {
  return fn as unknown as ModuleFunction
}

interface Registered {
  fn: ServerFunction
  check: TypeCheck<TSchema>
}

export class FunctionRegistry {
  #freshen: () => Promise<void> = async () => {}
  readonly #functions = new Map<string, Registered>()

  register (functions: readonly ServerFunction[]): void {
    for (const fn of functions) {
      if (this.#functions.has(fn.name)) throw new Error(`server function "${fn.name}" is registered twice`)
      this.#functions.set(fn.name, { fn, check: TypeCompiler.Compile(fn.args) })
    }
  }

  get (name: string): ServerFunction | undefined {
    return this.#functions.get(name)?.fn
  }

  /** The largest request body any function takes, `floor` at least. */
  largestRequest (floor: number): number {
    return Math.max(floor, ...[...this.#functions.values()].map(({ fn }) => fn.maxRequestBytes ?? 0))
  }

  get names (): string[] {
    return [...this.#functions.keys()]
  }

  /** Every module with functions, shared ones aside, in registration order. */
  get modules (): string[] {
    return [...new Set([...this.#functions.values()].map(({ fn }) => fn.module).filter(module => module !== SHARED_MODULE))]
  }

  /** Whether a signed-in user with `role` may call `fn`. */
  allows (role: Role, fn: ServerFunction): boolean {
    return fn.access === 'public' || mayCall(role, fn.access)
  }

  /** The modules (shared ones aside) in which `role` may call at least one function. */
  modulesFor (role: Role): string[] {
    const modules = new Set<string>()
    for (const { fn } of this.#functions.values()) {
      if (fn.module !== SHARED_MODULE && fn.access !== 'public' && mayCall(role, fn.access)) modules.add(fn.module)
    }
    return [...modules]
  }

  /** The functions a signed-in user with `role` may call. */
  functionsFor (role: Role): string[] {
    return [...this.#functions.values()].filter(({ fn }) => this.allows(role, fn)).map(({ fn }) => fn.name)
  }

  /**
   * Validate `raw` against the function's schema (defaults filled in) and run it; BadRequest names the
   * first problem. When the generative provider failed and the local engine answered instead, the
   * result carries `fallback_note` saying so. Attribution fields are taken out of the result for roles
   * that may not see them.
   */
  /** Run `freshen` before each call of a function that needs a session (what instances hold in memory is brought up to date). */
  beforeEachCall (freshen: () => Promise<void>): void {
    this.#freshen = freshen
  }

  async call (name: string, raw: unknown, caller: Caller): Promise<unknown> {
    const registered = this.#functions.get(name)
    if (registered === undefined) throw new NotFound(`no server function "${name}"`, { code: CAMPAIGN_CODES.NO_SUCH_FUNCTION })
    const args = Value.Default(registered.fn.args, raw)
    const problem = registered.check.Errors(args).First()
    if (problem !== undefined) throw new BadRequest(`invalid arguments: ${problem.path === '' ? '' : `${problem.path}: `}${problem.message}`)
    if (registered.fn.access !== 'public') await this.#freshen()
    const session = caller.session
    const actor = { by: session === undefined ? 'anonymous' : session.email !== '' ? session.email : session.name, role: session?.role ?? 'system', action: name } as const
    const { result, notes } = await actingAs(actor, async () => await collectingFallbackNotes(async () => await registered.fn.handler(args, caller)))
    const noted = notes.length > 0 && typeof result === 'object' && result !== null && !Array.isArray(result) ? { ...result, fallback_note: notes.join(' ') } : result
    return hideAttribution(noted, caller.session?.role)
  }
}
