// The admin page: admin-health (with the feedback per module) and admin-list-users.
import { Fragment } from 'preact'
import { useEffect } from 'preact/hooks'
import { useCall, type AuthInfo } from '../../ui/src/api.js'
import { MODULE_PAGES } from '../../ui/src/modules.js'
import { Card, ErrorLine } from '../../ui/src/ui.js'

interface Feedback { module_id: string, positive: number, negative: number, resources: number, last_at: string }
interface Health { status: string, uptime_seconds: number, identity_provider: string, counts: Record<string, number>, feedback: Feedback[] }
interface User { sub: string, email: string, name: string, role: string, last_login_at: string, logins: number }

export function AdminPage (_props: { auth: AuthInfo }) {
  const health = useCall<Health>('admin-health')
  const users = useCall<{ users: User[] }>('admin-list-users')
  useEffect(() => { void health.run(); void users.run() }, [])
  return (
    <>
      <h1>Admin</h1>
      <Card title="Health">
        <ErrorLine error={health.error} />
        {health.data !== undefined && (
          <dl class="facts" data-testid="health">
            <dt>Status</dt><dd>{health.data.status}</dd>
            <dt>Uptime</dt><dd>{health.data.uptime_seconds} s</dd>
            <dt>Identity provider</dt><dd>{health.data.identity_provider}</dd>
            {Object.entries(health.data.counts).map(([key, value]) => <Fragment key={key}><dt>{key.replace('_', ' ')}</dt><dd>{value}</dd></Fragment>)}
          </dl>
        )}
      </Card>
      <Card title="Feedback per module">
        {health.data?.feedback.length === 0 && <p class="muted">Nobody has rated a result yet.</p>}
        <table data-testid="feedback">
          <thead><tr><th>Module</th><th>Helpful</th><th>Not helpful</th><th>Share positive</th><th>Results rated</th><th>Last rating</th></tr></thead>
          <tbody>{health.data?.feedback.map(f => (
            <tr key={f.module_id} data-module={f.module_id}>
              <td>{MODULE_PAGES.find(page => page.id === f.module_id)?.title ?? f.module_id}</td>
              <td>{f.positive}</td><td>{f.negative}</td>
              <td>{Math.round(100 * f.positive / Math.max(1, f.positive + f.negative))} %</td>
              <td>{f.resources}</td><td>{new Date(f.last_at).toLocaleString()}</td>
            </tr>
          ))}</tbody>
        </table>
      </Card>
      <Card title="Users who signed in">
        <ErrorLine error={users.error} />
        <table>
          <thead><tr><th>Name</th><th>E-mail</th><th>Role</th><th>Last sign-in</th><th>Sign-ins</th></tr></thead>
          <tbody>{users.data?.users.map(u => <tr key={u.sub}><td>{u.name}</td><td>{u.email}</td><td>{u.role}</td><td>{new Date(u.last_login_at).toLocaleString()}</td><td>{u.logins}</td></tr>)}</tbody>
        </table>
      </Card>
    </>
  )
}
