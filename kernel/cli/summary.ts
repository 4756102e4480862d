// The block `berth server` prints for a person at a terminal once it has started: each open listener's
// address and what it serves, then what the plugins noted for that person (where the admin token is,
// how to sign in). Never logged: a note may hold a password drawn for that person.
import type { Kernel } from '../kernel.js'

export function startupSummary (kernel: Pick<Kernel, 'config' | 'listenerNames' | 'url' | 'notes'>): string {
  const listeners = kernel.listenerNames.map(name => ({ url: kernel.url(name).href, name, what: kernel.config.listeners.get(name)?.description }))
  const width = Math.max(...listeners.map(listener => listener.url.length))
  return [
    `berth server is running (pid ${process.pid}, state in ${kernel.config.stateDir})`,
    ...listeners.map(({ url, name, what }) => `  ${url.padEnd(width)}  ${name}${what === undefined ? '' : `: ${what}`}`),
    ...kernel.notes.map(note => `  ${note.replace(/\n/g, '\n    ')}`),
    ''
  ].join('\n')
}
