// The plain message page the login routes answer with when they refuse.
import escapeHtml from 'escape-html'

export function messagePage (title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto"><h1>${escapeHtml(title)}</h1>` +
    `<p>${escapeHtml(message)}</p><p><a href="/">Back to the application</a></p></body></html>`
}
