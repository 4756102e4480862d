// TypeBox for plugin runtimes (route and argument schemas), with the string formats the kernel knows:
// `cron` (six-field expressions) and `uri` (absolute URLs). Server-side only: it costs ~50 ms to load.
import { FormatRegistry } from '@sinclair/typebox'
import { cronProblem } from './scheduler.js'

FormatRegistry.Set('cron', value => cronProblem(value) === undefined)
FormatRegistry.Set('uri', value => URL.canParse(value))

export { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
