// The campaign web UI: asks check-auth who is signed in, shows the navigation of the modules the role
// may use, and the page of the current path. On a narrow screen the navigation is folded behind a
// Menu button in the header (style.css), which keeps Sign out in reach.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { checkAuth, useFallbackNote, type AuthInfo } from './api.js'
import { Icon } from './icons.js'
import { groupedPages, MODULE_PAGES } from './modules.js'
import { PAGES } from './pages.js'
import { HomePage } from './home.js'
import './style.css'

function App () {
  const [auth, setAuth] = useState<AuthInfo | undefined>(undefined)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const fallbackNote = useFallbackNote()
  const [navOpen, setNavOpen] = useState(false)
  useEffect(() => { checkAuth().then(setAuth, (err: Error) => { setFailure(err.message) }) }, [])

  if (failure !== undefined) return <main class="center"><p class="error">{failure}</p></main>
  if (auth === undefined) return <main class="center"><p>Loading…</p></main>
  if (!auth.authenticated) {
    return (
      <main class="center signin">
        <h1>Campaign Operations</h1>
        <a class="button" href={`/auth?redirect_url=${encodeURIComponent(location.pathname)}`}>Sign in</a>
      </main>
    )
  }
  const path = location.pathname
  const visible = MODULE_PAGES.filter(page => auth.modules.includes(page.id))
  const groups = groupedPages(visible)
  const current = MODULE_PAGES.find(page => page.path === path)
  const Page = current === undefined ? undefined : PAGES.get(current.id)
  return (
    <div class={navOpen ? 'shell nav-open' : 'shell'}>
      <header>
        <button type="button" class="menu" aria-controls="modules" aria-expanded={navOpen} aria-label="Menu" onClick={() => { setNavOpen(!navOpen) }}>
          <Icon name={navOpen ? 'close' : 'menu'} />
        </button>
        <a class="brand" href="/">Campaign Operations</a>
        <span class="who"><span class="user-name" data-testid="user-name">{auth.name}</span> <span class="badge" data-testid="role">{auth.role}</span></span>
        <a class="signout" href="/logout">Sign out</a>
      </header>
      <nav id="modules" aria-label="Modules">
        <a href="/" class={path === '/' ? 'active' : ''}>Home</a>
        {groups.map(group => (
          <div key={group.title} class="group" role="group" aria-label={group.title}>
            <span class="group-title">{group.title}</span>
            {group.pages.map(page => <a key={page.id} href={page.path} class={page.path === path ? 'active' : ''} data-module={page.id}>{page.title}</a>)}
          </div>
        ))}
      </nav>
      <main>
        {fallbackNote !== undefined && <p class="fallback-note" role="status" data-testid="fallback-note">{fallbackNote}</p>}
        {current === undefined || Page === undefined
          ? <HomePage auth={auth} groups={groups} />
          : auth.modules.includes(current.id)
            ? <Page auth={auth} modules={MODULE_PAGES} />
            : <p class="error" role="alert">Your role ({auth.role}) may not use {current.title}.</p>}
      </main>
    </div>
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
