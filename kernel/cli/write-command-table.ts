// Run by `npm run build:ts` once tsc has built dist/: writes the table of the built plugins' commands
// beside the built CLI (see command-table.ts), so that `berth --help` loads no plugin.
import { BUILTIN_PLUGIN_DIR } from '../loader.js'
import { writeCommandTable } from './command-table.js'

await writeCommandTable(BUILTIN_PLUGIN_DIR)
