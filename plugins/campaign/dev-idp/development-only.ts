// The refusal of a development aid (an embedded identity provider, a fallback user) in production.
// A module of its own, light enough for the plugin definitions every `berth` command reads.
import { StartupError } from '../../../kernel/index.js'

/** Refuse a development aid, named by its setting (with its variable or flag), when NODE_ENV=production. */
export function developmentOnly (production: boolean, setting: string): void {
  if (production) throw new StartupError(`${setting} is for development and is refused when NODE_ENV=production`)
}
