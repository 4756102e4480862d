// Debian's nginx as a reference HTTP/1 front for differential tests: one server on a loopback port,
// proxying every request for `a.test` to an upstream, run in the foreground from a temporary prefix
// (its own pid file, temporary paths and error log) and stopped when the test ends.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureDebianPackages } from './component.js'
import { probablyFreePort } from './net.js'
import { pollUntil } from './poll.js'
import { tempDir } from './tmp.js'

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** Start nginx proxying `server_name` to 127.0.0.1:`upstream`; its port. */
export async function startNginx (t: Teardown, upstream: number, serverName: string): Promise<number> {
  await ensureDebianPackages(['nginx-light'])
  const dir = tempDir(t)
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) mkdirSync(join(dir, sub))
  const port = await probablyFreePort()
  writeFileSync(join(dir, 'nginx.conf'), `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    server_name ${serverName};
    location / { proxy_pass http://127.0.0.1:${upstream}; }
  }
}
`)
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString() })
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await new Promise(resolve => child.once('exit', resolve))
    }
  })
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${errors.trim()}`)
    return await fetch(`http://127.0.0.1:${port}/`, { headers: { host: serverName } }).then(() => true, () => false)
  }, { timeout: 15_000, what: 'nginx to answer' })
  return port
}
