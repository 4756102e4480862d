// The telemetry dashboard: sign-in as the API's mode says (/auth/mode: a Basic form, or single sign-on
// with PKCE), then the navigation and the view of the current #/path, refreshed by the live events.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, followEvents, signedIn, signIn, signOut, type LiveEvent, type Me } from './api.js'
import { finishSignIn, startSignIn, type SsoMode } from './sso.js'
import { IssuesView, IssueView } from './issues.js'
import { FleetMetricsView, ReleasesView } from './operations.js'
import { AlertsView, DevicesView, DeviceView, FirmwareView, GroupsView, OtaView, OverviewView } from './views.js'
import './style.css'

function SignIn ({ done }: { done: (me: Me) => void }) {
  const [mode, setMode] = useState<{ mode: 'basic' } | SsoMode | undefined>(undefined)
  const [user, setUser] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<string | undefined>(undefined)
  useEffect(() => {
    finishSignIn().then(async returned => {
      if (returned) done(await api<Me>('GET', '/auth/me'))
      else setMode(await api<{ mode: 'basic' } | SsoMode>('GET', '/auth/mode'))
    }).catch((err: Error) => { setFailure(err.message); api<{ mode: 'basic' } | SsoMode>('GET', '/auth/mode').then(setMode, () => {}) })
  }, [])
  if (mode?.mode === 'sso') {
    return (
      <main class="center">
        <h1>Berth telemetry</h1>
        <button class="sso" onClick={() => { void startSignIn(mode) }}>Sign in with single sign-on</button>
        {failure !== undefined && <p class="error">{failure}</p>}
      </main>
    )
  }
  return (
    <main class="center">
      <h1>Berth telemetry</h1>
      <form class="signin" onSubmit={e => { e.preventDefault(); signIn(user, password).then(done, (err: Error) => { setFailure(err.message) }) }}>
        <input name="user" placeholder="User" value={user} onInput={e => { setUser(e.currentTarget.value) }} />
        <input name="password" type="password" placeholder="Password" value={password} onInput={e => { setPassword(e.currentTarget.value) }} />
        <button type="submit">Sign in</button>
      </form>
      {failure !== undefined && <p class="error">{failure}</p>}
    </main>
  )
}

function useHash (): string {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const changed = (): void => { setHash(location.hash) }
    addEventListener('hashchange', changed)
    return () => { removeEventListener('hashchange', changed) }
  }, [])
  return hash
}

/** The view of the current #/path. */
function viewOf (hash: string, me: Me, version: number) {
  const device = /^#\/devices\/([0-9a-f]{16})$/.exec(hash)?.[1]
  if (device !== undefined) return <DeviceView id={device} version={version} />
  const issue = /^#\/issues\/([0-9a-f]{16})$/.exec(hash)?.[1]
  if (issue !== undefined) return <IssueView id={issue} me={me} version={version} />
  switch (hash) {
    case '#/issues': return <IssuesView version={version} />
    case '#/releases': return <ReleasesView me={me} version={version} />
    case '#/fleet-metrics': return <FleetMetricsView version={version} />
    case '#/devices': return <DevicesView version={version} />
    case '#/groups': return <GroupsView me={me} version={version} />
    case '#/ota': return <OtaView me={me} version={version} />
    case '#/firmware': return <FirmwareView me={me} />
    case '#/alerts': return <AlertsView version={version} />
    default: return <OverviewView version={version} />
  }
}

function App () {
  const [me, setMe] = useState<Me | undefined>(undefined)
  const [version, setVersion] = useState(0)
  const [live, setLive] = useState(false)
  const [recent, setRecent] = useState<LiveEvent[]>([])
  const hash = useHash()
  useEffect(() => { if (signedIn()) api<Me>('GET', '/auth/me').then(setMe, () => { signOut() }) }, [])
  useEffect(() => {
    if (me === undefined) return
    const stop = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    void followEvents(event => {
      setRecent(list => [event, ...list].slice(0, 8))
      timer ??= setTimeout(() => { timer = undefined; setVersion(v => v + 1) }, 300)
    }, setLive, stop.signal)
    return () => { stop.abort() }
  }, [me])
  if (me === undefined) return <SignIn done={setMe} />
  const view = viewOf(hash, me, version)
  return (
    <div class="layout">
      <nav>
        <b>Berth telemetry</b>
        <a href="#/">Overview</a><a href="#/issues">Issues</a><a href="#/devices">Devices</a><a href="#/fleet-metrics">Fleet metrics</a><a href="#/releases">Releases</a><a href="#/groups">Groups</a><a href="#/ota">OTA</a><a href="#/firmware">Firmware</a><a href="#/alerts">Alerts</a>
        <span class={live ? 'live on' : 'live'}>{live ? 'live' : 'offline'}</span>
        <span class="me">{me.name} ({me.role})</span>
        <button onClick={() => { signOut(); setMe(undefined) }}>Sign out</button>
      </nav>
      <main>{view}</main>
      <aside><h3>Live events</h3><ul class="events">{recent.map((e, i) => <li key={i}>{e.kind} {e.device ?? ''}</li>)}</ul></aside>
    </div>
  )
}

const root = document.getElementById('app')
if (root !== null) render(<App />, root)
