#!/usr/bin/env node
// The `berth` command's entry: turns on Node's compile cache (V8's code for each module kept on disk,
// in the OS's temporary folder unless NODE_COMPILE_CACHE names another, so that a command compiles
// less the next time), then runs the command (main.ts), whose modules all load after it. A Node.js
// without the cache (before 22.1) runs the command all the same.
import type NodeModule from 'node:module'

const nodeModule: Partial<typeof NodeModule> = process.getBuiltinModule('node:module')
nodeModule.enableCompileCache?.()
await import('./main.js')
