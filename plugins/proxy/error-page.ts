// Answers the proxy makes itself (404 unknown host, 414, 502, 503, 504): a small HTML page, or
// {"error": "..."} for a client that asks for JSON.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, c => ESCAPES[c])

function wantsJson (req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

export function sendError (req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  const reason = STATUS_CODES[status] ?? 'Error'
  const json = wantsJson(req)
  const body = json
    ? JSON.stringify({ error: message })
    : `<!doctype html>\n<html><head><meta charset="utf-8"><title>${status} ${reason}</title></head>\n<body><h1>${status} ${reason}</h1><p>${escapeHtml(message)}</p></body></html>\n`
  res.writeHead(status, {
    'content-type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store'
  })
  res.end(req.method === 'HEAD' ? undefined : body)
}
