// The home page: a card per module the role may use, by group.
import type { AuthInfo } from './api.js'
import type { ModulePage } from './modules.js'

export function HomePage ({ auth, groups }: { auth: AuthInfo, groups: Array<{ title: string, pages: ModulePage[] }> }) {
  return (
    <>
      <h1>Welcome, {auth.name}</h1>
      <p class="muted">Signed in as {auth.email} with the {auth.role} role.</p>
      {groups.map(group => (
        <section key={group.title}>
          <h2 class="group-heading">{group.title}</h2>
          <div class="tiles">
            {group.pages.map(page => <a key={page.id} class="tile" href={page.path}><strong>{page.title}</strong><span>{page.blurb}</span></a>)}
          </div>
        </section>
      ))}
    </>
  )
}
