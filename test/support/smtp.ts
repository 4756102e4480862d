// A real SMTP server for tests of sending e-mail: npm smtp-server on a loopback port, plain SMTP (no
// STARTTLS, no authentication), each accepted message parsed with mailparser and kept in `received`.
// Addresses in `refuse` get 550 at RCPT TO; `stop()` closes it (then sending fails to connect). The
// server belongs to the test that starts it and is stopped at its end.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface MailServer { port: number, received: ParsedMail[], refuse: Set<string>, stop(): Promise<void> }

/** A real SMTP server on loopback keeping every message it accepts; addresses in `refuse` get 550 at RCPT TO. */
export async function mailServer (t: { teardown: (fn: () => unknown) => void }): Promise<MailServer> {
  const received: ParsedMail[] = []
  const refuse = new Set<string>()
  const server = new SMTPServer({
    // smtp-server's built-in certificate has expired: plain SMTP on loopback.
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    closeTimeout: 200,
    onRcptTo (address, _session, callback) {
      if (refuse.has(address.address.toLowerCase())) {
        const refusal = Object.assign(new Error(`5.1.1 <${address.address}>: mailbox unavailable`), { responseCode: 550 })
        callback(refusal)
        return
      }
      callback()
    },
    onData (stream, _session, callback) {
      simpleParser(stream).then(mail => { received.push(mail); callback() }, (err: Error) => { callback(err) })
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server.server, 'listening')
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  }
  t.teardown(stop)
  return { port: (server.server.address() as AddressInfo).port, received, refuse, stop }
}
