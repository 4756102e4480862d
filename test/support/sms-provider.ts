// A stand-in SMS provider on 127.0.0.1 for the campaign's sending module (no carrier can be reached
// here): it takes POST /messages with JSON {to, body} and the bearer token, answers 201 with an id, 500
// for numbers in `failFor` and 401 without the token, and keeps every message it accepted.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SmsProvider {
  /** The endpoint to configure as `[campaign].sms_url`. */
  url: string
  received: Array<{ to: string, body: string, authorization: string | undefined }>
  /** Numbers answered 500. */
  failFor: Set<string>
}

async function readBody (request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Start the stand-in, expecting `token`; it is stopped at the end of `t`. */
export async function smsProvider (t: { teardown: (fn: () => unknown) => void }, token: string): Promise<SmsProvider> {
  const received: SmsProvider['received'] = []
  const failFor = new Set<string>()
  const server: Server = createServer((request, response) => {
    void readBody(request).then(text => {
      const authorization = request.headers.authorization
      if (request.method !== 'POST' || request.url !== '/messages' || request.headers['content-type'] !== 'application/json') {
        response.writeHead(400).end('bad request')
        return
      }
      if (authorization !== `Bearer ${token}`) {
        response.writeHead(401).end('unauthorized')
        return
      }
      const message = JSON.parse(text) as { to: string, body: string }
      received.push({ ...message, authorization })
      if (failFor.has(message.to)) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"carrier unavailable"}')
        return
      }
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `sms-${received.length}` }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`, received, failFor }
}
