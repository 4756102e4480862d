// The HTML pages of the development identity provider: its sign-in form and its sign-out confirmation.
import escapeHtml from 'escape-html'

const STYLE = 'body{font-family:system-ui,sans-serif;background:#f4f5f7;display:grid;place-items:center;min-height:100vh;margin:0}' +
  'main{background:#fff;padding:2rem 2.5rem;border-radius:10px;box-shadow:0 2px 12px #0002;min-width:18rem}' +
  'h1{font-size:1.2rem;margin-top:0}label{display:block;margin:.8rem 0 .3rem}input{width:100%;padding:.5rem;box-sizing:border-box}' +
  'button{margin-top:1.2rem;width:100%;padding:.6rem;border:0;border-radius:6px;background:#2457c5;color:#fff;font-size:1rem;cursor:pointer}' +
  '.error{color:#b00020}small{color:#666}'

function page (title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

export function loginPage (realm: string, error?: string): string {
  return page('Sign in', `<h1>Sign in to ${escapeHtml(realm)}</h1>` +
    (error !== undefined ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '') +
    '<form method="post" autocomplete="off">' +
    '<label for="username">Username</label><input id="username" name="username" required autofocus>' +
    '<label for="password">Password</label><input id="password" name="password" type="password" required>' +
    '<button type="submit">Sign in</button></form><small>Development identity provider</small>')
}

/** `form` is the provider's own hidden form (with its xsrf field); the button submits it with logout=yes. */
export function logoutPage (form: string): string {
  return page('Sign out', `<h1>Sign out?</h1>${form}` +
    '<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>')
}
