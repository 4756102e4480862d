// The home page: a card per module the role may use.
import type { AuthInfo } from '../api.js'
import type { ModulePage } from '../modules.js'

export function HomePage ({ auth, pages }: { auth: AuthInfo, pages: ModulePage[] }) {
  return (
    <>
      <h1>Welcome, {auth.name}</h1>
      <p class="muted">Signed in as {auth.email} with the {auth.role} role.</p>
      <div class="tiles">
        {pages.map(page => <a key={page.id} class="tile" href={page.path}><strong>{page.title}</strong><span>{page.blurb}</span></a>)}
      </div>
    </>
  )
}
