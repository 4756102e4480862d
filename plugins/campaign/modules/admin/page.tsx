// The admin page: admin-health (with the feedback per module), admin-list-users, the API tokens of
// external clients (made, listed, revoked; a new token's secret shown once), and the audit log with its export.
import { Fragment } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { useCall, type AuthInfo, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'

interface Feedback { module_id: string, positive: number, negative: number, resources: number, last_at: string }
interface Health { status: string, uptime_seconds: number, identity_provider: string, counts: Record<string, number>, feedback: Feedback[] }
interface Token { id: string, name: string, role: string, created_at: string, created_by: string, last_used_at?: string }
interface AuditEntry { audit_id: string, at: string, by: string, role: string, function: string, table: string, key: string, change: string, before: unknown, after: unknown }
interface User { sub: string, email: string, name: string, role: string, last_login_at: string, logins: number }

/** The fields an entry's write changed (every field of a record made or deleted). */
function changedFields ({ before, after }: AuditEntry): string[] {
  const fields = (value: unknown): Record<string, unknown> => typeof value === 'object' && value !== null ? value as Record<string, unknown> : {}
  const [was, is] = [fields(before), fields(after)]
  return [...new Set([...Object.keys(was), ...Object.keys(is)])].filter(field => JSON.stringify(was[field]) !== JSON.stringify(is[field]))
}

export function AdminPage ({ modules }: { auth: AuthInfo, modules: ReadonlyArray<{ id: string, title: string }> }) {
  const health = useCall<Health>('admin-health')
  const users = useCall<{ users: User[] }>('admin-list-users')
  const tokens = useCall<{ tokens: Token[] }>('admin-list-api-tokens')
  const create = useCall<Token & { token: string }>('admin-create-api-token')
  const revoke = useCall<{ revoked: string }>('admin-revoke-api-token')
  const audit = useCall<{ entries: AuditEntry[], next_cursor: string | null }>('audit-log')
  const [table, setTable] = useState('')
  const readAudit = async (only: string): Promise<void> => { setTable(only); await audit.run(only === '' ? { limit: 100 } : { table: only, limit: 100 }) }
  useEffect(() => { void health.run(); void users.run(); void tokens.run(); void readAudit('') }, [])
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
              <td>{modules.find(page => page.id === f.module_id)?.title ?? f.module_id}</td>
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
      <Card title="API tokens">
        <p class="muted">External clients send a token as <code>Authorization: Bearer …</code> and act with its role.</p>
        <form class="grid" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          void create.run({ name: formValue(form, 'name'), role: formValue(form, 'role') }).then(async made => { if (made !== undefined) { form.reset(); await tokens.run() } })
        }}>
          <Field label="What it is for"><input name="name" required maxLength={64} /></Field>
          <Field label="Role"><select name="role">{['readonly', 'volunteer', 'staff', 'admin'].map(role => <option key={role} value={role}>{role}</option>)}</select></Field>
          <button type="submit" disabled={create.busy}>Create token</button>
        </form>
        <ErrorLine error={create.error ?? tokens.error ?? revoke.error} />
        {create.data !== undefined && <p data-testid="new-token">Copy it now, it is not shown again: <span class="secret">{create.data.token}</span></p>}
        <table data-testid="tokens">
          <thead><tr><th>Name</th><th>Role</th><th>Created</th><th>By</th><th></th></tr></thead>
          <tbody>{tokens.data?.tokens.map(token => (
            <tr key={token.id}>
              <td>{token.name}</td><td>{token.role}</td><td>{new Date(token.created_at).toLocaleString()}</td><td>{token.created_by}</td>
              <td><button type="button" onClick={() => { void revoke.run({ id: token.id }).then(async () => { await tokens.run() }) }}>Revoke</button></td>
            </tr>
          ))}</tbody>
        </table>
      </Card>
      <Card title="Audit log">
        <form class="row" onSubmit={e => { e.preventDefault(); void readAudit(formValue(e.currentTarget, 'table')) }}>
          <input name="table" aria-label="Table" placeholder="All tables (or people, donations, volunteers…)" />
          <button type="submit" disabled={audit.busy}>Show</button>
        </form>
        <ErrorLine error={audit.error} />
        <p class="muted"><a href={`/export/audit${table === '' ? '' : `?table=${encodeURIComponent(table)}`}`} download>Export CSV</a></p>
        <table data-testid="audit">
          <thead><tr><th>When</th><th>Who</th><th>Function</th><th>Record</th><th>Change</th><th>Fields changed</th></tr></thead>
          <tbody>{audit.data?.entries.map(entry => (
            <tr key={entry.audit_id}>
              <td>{new Date(entry.at).toLocaleString()}</td><td>{entry.by} ({entry.role})</td><td>{entry.function}</td><td>{entry.table} {entry.key}</td>
              <td>{entry.change}</td><td>{changedFields(entry).join(', ')}</td>
            </tr>
          ))}</tbody>
        </table>
      </Card>
    </>
  )
}
