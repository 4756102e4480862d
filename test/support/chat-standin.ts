// A stand-in for an OpenAI-compatible chat API on 127.0.0.1 (no model can be downloaded here): it
// answers POST …/chat/completions with the text `answer` gives for each request and keeps every
// request it received, so a test can check what a module sent to the generative provider.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ChatRequest {
  url: string
  body: { model: string, messages: Array<{ role: string, content: string }>, max_tokens?: number }
}

export interface ChatStandIn {
  /** The base URL to configure as `[campaign].generator_url` (up to and including /v1). */
  url: string
  /** host:port, as the generator names it (`generative (<model> at <host>)`). */
  host: string
  received: ChatRequest[]
  /** Stop listening and drop open connections: later requests fail to connect. */
  stop: () => Promise<void>
}

/** Reads a request body as JSON. */
async function jsonBody (request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/** Start the stand-in; it is stopped at the end of `t` (or earlier with `stop()`). */
export async function startChatStandIn (t: { teardown: (fn: () => unknown) => void }, answer: (request: ChatRequest) => string): Promise<ChatStandIn> {
  const received: ChatRequest[] = []
  const server = createServer((request, response) => {
    void jsonBody(request).then(body => {
      const chat = { url: request.url ?? '', body: body as ChatRequest['body'] }
      received.push(chat)
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: answer(chat) } }] }))
    })
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  const { port } = server.address() as AddressInfo
  const stop = async (): Promise<void> => {
    if (!server.listening) return
    await new Promise<void>(resolve => { server.close(() => { resolve() }); server.closeAllConnections() })
  }
  t.teardown(stop)
  return { url: `http://127.0.0.1:${port}/v1`, host: `127.0.0.1:${port}`, received, stop }
}
