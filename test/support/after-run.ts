// tap's `after` script (package.json): when a run ends, stop the daemons it started (teardown.ts)
// and list its slowest test files (scripts/test-times.js, which writes every file's time to
// .tap/test-times.txt).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import './teardown.js'

spawnSync(process.execPath, [fileURLToPath(new URL('../../scripts/test-times.js', import.meta.url))], { stdio: 'inherit' })
