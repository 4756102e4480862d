// Writes for the proxy's fast lane, straight to a plain TCP socket's handle (libuv's stream, as
// net.Socket's own writes end up) while the socket has nothing queued: the bytes go out in the same
// system call, without the stream's per-write objects and its deferred callbacks. The write request
// objects come from Node's stream binding; where this Node does not offer it as expected (checked
// once), where the socket is TLS, still connecting, ending, or has writes queued, the socket's own
// write() is used, which keeps the order: libuv queues a write behind any unfinished one.
import type { Socket } from 'node:net'
import { getSystemErrorName } from 'node:util'

interface StreamBinding {
  WriteWrap: new () => WriteRequest
  streamBaseState: Int32Array
  kLastWriteWasAsync: number
}

interface WriteRequest {
  /** Called by libuv's side when a write that could not finish at once has finished. */
  oncomplete?: (status: number) => void
  /**
   * The bytes of a write that could not finish at once: libuv writes them from their memory later,
   * so they are kept from the garbage collector until then (a replaced read buffer has no other owner).
   */
  buffer?: string | Buffer
}

interface StreamHandle {
  writeLatin1String?: (request: WriteRequest, text: string) => number
  writeBuffer?: (request: WriteRequest, bytes: Buffer) => number
  /** Bytes of unfinished writes. */
  writeQueueSize?: number
}

function load (): StreamBinding | undefined {
  try {
    const binding = (process as unknown as { binding: (name: string) => Partial<StreamBinding> }).binding('stream_wrap')
    const { WriteWrap, streamBaseState, kLastWriteWasAsync } = binding
    if (typeof WriteWrap !== 'function' || !(streamBaseState instanceof Int32Array) || typeof kLastWriteWasAsync !== 'number' || kLastWriteWasAsync >= streamBaseState.length) return undefined
    return binding as StreamBinding
  } catch {
    return undefined
  }
}

const binding = load()
/** Whether writes can go to a socket's handle on this Node (else every write goes through the socket). */
export const directWrites = binding !== undefined
/** The request object for the next write: one that finished at once leaves it free for the next (unused without the binding). */
let request: WriteRequest = binding === undefined ? {} : new binding.WriteWrap()

function handleOf (socket: Socket): StreamHandle | null | undefined {
  return (socket as unknown as { _handle?: StreamHandle | null })._handle
}

/** A failed write, as net.Socket reports one. */
function writeError (status: number): NodeJS.ErrnoException {
  const code = getSystemErrorName(status)
  return Object.assign(new Error(`write ${code}`), { errno: status, code, syscall: 'write' })
}

/** The handle of `socket` when a write can go to it now: plain TCP, connected, nothing queued. */
function directHandle (socket: Socket): Required<StreamHandle> | undefined {
  const handle = handleOf(socket)
  if (binding === undefined || handle?.writeQueueSize !== 0 || socket.writableLength !== 0 || !socket.writable || socket.connecting ||
    (socket as { encrypted?: boolean }).encrypted === true || handle.writeLatin1String === undefined || handle.writeBuffer === undefined) return undefined
  return handle as Required<StreamHandle>
}

/** Write to `handle`; true when the handle keeps the bytes (the kernel did not take them all at once). */
function writeTo (socket: Socket, handle: Required<StreamHandle>, data: string | Buffer): boolean {
  const { streamBaseState, kLastWriteWasAsync, WriteWrap } = binding as StreamBinding
  const status = typeof data === 'string' ? handle.writeLatin1String(request, data) : handle.writeBuffer(request, data)
  if (status < 0) {
    socket.destroy(writeError(status))
    return false
  }
  if (streamBaseState[kLastWriteWasAsync] === 0) return false
  // The handle keeps this request (and the bytes) until the rest is written.
  request.buffer = data
  request.oncomplete = (done: number) => { if (done < 0) socket.destroy(writeError(done)) }
  request = new WriteWrap()
  return true
}

/** Write `data` (text in latin1) to `socket`: to its handle when it can take it now, else through the socket. */
export function writeOut (socket: Socket, data: string | Buffer): void {
  if (socket.destroyed) return
  const handle = directHandle(socket)
  if (handle !== undefined) writeTo(socket, handle, data)
  else if (typeof data === 'string') socket.write(data, 'latin1')
  else socket.write(data)
}

/**
 * Write a piece of a buffer the caller reuses: to the handle as it is, or through the socket, which
 * keeps what it is given until it is sent, as a copy when it is at most `copyUpTo` bytes. True when
 * the socket may still hold the piece itself (the caller's buffer must not change under it).
 */
export function writePiece (socket: Socket, piece: Buffer, copyUpTo: number): boolean {
  if (socket.destroyed) return false
  const handle = directHandle(socket)
  if (handle !== undefined) return writeTo(socket, handle, piece)
  const copied = piece.length <= copyUpTo
  socket.write(copied ? Buffer.from(piece) : piece)
  return !copied
}

/** Bytes written to `socket` that it has not passed to the kernel yet (its queue and its handle's). */
export function heldBy (socket: Socket): number {
  return socket.writableLength + (handleOf(socket)?.writeQueueSize ?? 0)
}
