// check-auth, the one public server function: who is signed in (the spec's auth info record) and the
// modules their role may use. With the development fallback on, nobody signed in reads as a fixed admin.
import { Type } from '../../../../kernel/schema.js'
import { SHARED_MODULE, serverFunction, type FunctionRegistry, type ServerFunction, type Role } from '../../module-kit.js'

export interface AuthInfo {
  authenticated: boolean
  email: string
  name: string
  /** The role, or '' when not signed in. */
  role: Role | ''
  /** Modules the role may use (the UI's navigation). */
  modules: string[]
  /** Server functions the role may call (the UI shows only the actions it may take). */
  functions: string[]
}

/** The spec's development fallback identity. */
const FALLBACK_ADMIN = { email: 'dev@localhost', name: 'Development Admin', role: 'admin' } as const

export function authInfoFunctions (options: { devFallback: boolean, registry: Pick<FunctionRegistry, 'modulesFor' | 'functionsFor'> }): ServerFunction[] {
  const { registry } = options
  return [serverFunction({
    name: 'check-auth',
    module: SHARED_MODULE,
    access: 'public',
    args: Type.Object({}, { additionalProperties: false }),
    handler: (_args, { session }): AuthInfo => {
      const who = session ?? (options.devFallback ? FALLBACK_ADMIN : undefined)
      if (who === undefined) return { authenticated: false, email: '', name: '', role: '', modules: [], functions: [] }
      return { authenticated: true, email: who.email, name: who.name, role: who.role, modules: registry.modulesFor(who.role), functions: registry.functionsFor(who.role) }
    }
  })]
}
