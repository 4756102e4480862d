#!/usr/bin/env node
// The `berth` command's entry: turns on Node's compile cache (V8's code for each module kept on disk,
// in the OS's temporary folder unless NODE_COMPILE_CACHE names another, so that a command compiles
// less the next time), then runs the command (main.ts), whose modules all load after it.
process.getBuiltinModule('node:module').enableCompileCache()
await import('./main.js')
