// The fast lane's writes straight to a socket's handle: a write the kernel cannot take at once
// finishes later without holding the next ones up or letting them overtake it, what is held is
// counted, a failed write ends the socket with the error, and a TLS socket is written through (a
// small piece of a buffer the caller reuses as a copy).
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls'
import { heldBy, writeOut, writePiece } from '../../../plugins/proxy/fast-lane/direct-write.js'
import { selfSigned } from '../../../plugins/proxy/certificates.js'
import { pollUntil } from '../../support/poll.js'

/** A connected pair on loopback (`tls`: over TLS): `near` is written to, `far` reads (paused until asked). */
async function pair (t: Test, tls = false): Promise<{ near: Socket, far: Socket }> {
  const server = tls ? createTlsServer(await selfSigned('direct.test')) : createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const accepted = once(server, tls ? 'secureConnection' : 'connection')
  const { port } = server.address() as AddressInfo
  const near = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1')
  await once(near, tls ? 'secureConnect' : 'connect')
  const [far] = await accepted as [Socket]
  far.pause()
  t.teardown(() => { near.destroy(); far.destroy() })
  return { near, far }
}

/** Everything `far` reads until `length` bytes have come. */
async function readAll (far: Socket, length: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let received = 0
  far.on('data', (chunk: Buffer) => { chunks.push(chunk); received += chunk.length })
  far.resume()
  await pollUntil(() => received >= length, { timeout: 20_000, what: `${length} bytes` })
  return Buffer.concat(chunks)
}

/** 16 MiB whose every 4 bytes differ, so that a misplaced piece shows. */
const BIG = Buffer.alloc(16 << 20)
for (let i = 0; i < BIG.length; i += 4) BIG.writeUInt32LE(i, i)

t.test('a write the kernel cannot take at once finishes later, and the writes after it keep their order', async t => {
  const { near, far } = await pair(t)
  writeOut(near, 'head:')
  writeOut(near, BIG)
  t.ok(heldBy(near) > 0, `the peer does not read: part of it is held (${heldBy(near)} bytes)`)
  t.equal(near.writableLength, 0, 'held by the handle, not queued in the socket')
  writeOut(near, ':tail')
  writeOut(near, Buffer.from(':end'))
  const got = await readAll(far, BIG.length + 14)
  t.ok(got.equals(Buffer.concat([Buffer.from('head:'), BIG, Buffer.from(':tail:end')])), 'every byte, in the order written')
  await pollUntil(() => heldBy(near) === 0, { what: 'nothing held' })
  writeOut(near, 'again')
  t.equal((await readAll(far, 5)).toString(), 'again', 'the next write goes straight out again')
})

t.test('a write to a connection the peer reset ends the socket with the error', async t => {
  const { near, far } = await pair(t)
  // Not reading: the reset can only show through a write.
  near.pause()
  const failed = once(near, 'error')
  far.resetAndDestroy()
  await once(far, 'close')
  // Writes go on until one fails (the first may reach the kernel before the reset has).
  await pollUntil(() => {
    writeOut(near, 'more')
    return near.destroyed
  }, { what: 'the failed write' })
  const [error] = await failed as [NodeJS.ErrnoException]
  t.match(error, { syscall: 'write', code: /^(EPIPE|ECONNRESET)$/ }, `the socket ended with the write's error, ${error.code}`)
  writeOut(near, 'after the end')
  t.ok(near.destroyed, 'a write after the end is dropped, not thrown')
})

t.test('a TLS socket is written through its own write(); a small piece of a reused buffer goes as a copy', async t => {
  const { near, far } = await pair(t, true)
  writeOut(near, 'secret:')
  writeOut(near, BIG)
  const reused = Buffer.from('piece')
  t.equal(writePiece(near, reused, 1024), false, 'a small piece is copied: the caller may reuse its buffer at once')
  reused.write('XXXXX')
  t.equal(writePiece(near, BIG.subarray(0, 4096), 1024), true, 'a larger one is kept by the socket as it is')
  const got = await readAll(far, BIG.length + 7 + 5 + 4096)
  t.ok(got.equals(Buffer.concat([Buffer.from('secret:'), BIG, Buffer.from('piece'), BIG.subarray(0, 4096)])), 'every byte, encrypted and in order')
})
