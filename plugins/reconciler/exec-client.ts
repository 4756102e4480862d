// The client side of `berth exec`: the command sent as the first message, the terminal put in raw mode
// when both ends of it are one (so keys reach the command as typed, and its TTY follows the window's
// size), stdin carried until it ends, output and errors written as they come, and the command's exit
// code made this process's.
import type { WebSocket } from 'ws'

/** Run `command` over an open exec socket; resolves with the command's exit code. */
export async function runExec (socket: WebSocket, command: string[]): Promise<number> {
  const { stdin, stdout, stderr } = process
  const tty = stdin.isTTY && stdout.isTTY
  socket.send(JSON.stringify({ command, tty, ...(tty && { columns: stdout.columns, rows: stdout.rows }) }))
  const onInput = (chunk: Buffer): void => { socket.send(chunk) }
  const onEnd = (): void => { if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ eof: true })) }
  const onResize = (): void => { socket.send(JSON.stringify({ resize: [stdout.columns, stdout.rows] })) }
  if (tty) {
    stdin.setRawMode(true)
    stdout.on('resize', onResize)
  }
  stdin.on('data', onInput).on('end', onEnd).resume()
  try {
    return await new Promise<number>((resolve, reject) => {
      let outcome: { exit: number } | { error: string } | undefined
      socket.on('message', (data: Buffer, binary: boolean) => {
        if (binary) (data[0] === 2 ? stderr : stdout).write(data.subarray(1))
        else outcome = JSON.parse(data.toString()) as { exit: number } | { error: string }
      })
      socket.once('close', (code: number, reason: Buffer) => {
        if (outcome !== undefined && 'exit' in outcome) resolve(outcome.exit)
        else reject(new Error(outcome?.error ?? `the server closed the session (${code}${reason.length > 0 ? `: ${reason.toString()}` : ''})`))
      })
      socket.once('error', reject)
    })
  } finally {
    stdin.off('data', onInput).off('end', onEnd).pause()
    stdout.off('resize', onResize)
    if (tty) stdin.setRawMode(false)
  }
}
