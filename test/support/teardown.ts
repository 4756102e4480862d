// Stops the daemons a test run started for all its test files (the Docker engine, etcd, PostgreSQL)
// and removes their data. tap runs it after the last test file ("after" in package.json's tap config);
// by hand: node --import tsx test/support/teardown.ts
import { stopRunDaemons } from './daemon.js'

for (const name of await stopRunDaemons()) console.error(`# stopped ${name} (started by this test run)`)
