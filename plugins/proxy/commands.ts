// `berth proxy routes`: the routing table of the running server, a line per replica.
import { controlClient, formatTable, type CliRegistry } from '../../kernel/index.js'
import type { RouteView } from './control-routes.js'

export function proxyCommands (cli: CliRegistry): void {
  const proxy = cli.program.command('proxy').description('the built-in reverse proxy')
  proxy.command('routes')
    .description('the routing table: each domain, its service and replicas, and whether each serves')
    .option('--json', 'print the answer as JSON')
    .action(async (options: { json?: boolean }) => {
      // Loaded when the command runs: the reconciler's contract module brings its runtime's modules.
      const { describeCertificate } = await import('../reconciler/api.js')
      const client = await controlClient(cli)
      const { routes } = await client.json<{ routes: RouteView[] }>('GET', '/api/v1/proxy/routes')
      if (options.json === true) {
        console.log(JSON.stringify({ routes }, null, 2))
        return
      }
      const rows = routes.map(route => ({ ...route, domain: `${route.domain}${route.path_prefix ?? ''}` })).flatMap(route => route.redirect !== undefined || route.upstreams.length === 0
        ? [[route.domain, route.service, '-', route.redirect !== undefined ? `redirects to ${route.redirect}` : 'no replica running', describeCertificate(route.certificate)]]
        : route.upstreams.map(u => [route.domain, route.service, u.address, `${u.draining ? 'draining' : u.healthy ? 'serving' : 'failing health check'}${u.canary === true ? ` (canary, ${route.canary_weight ?? 0}%)` : ''}`, describeCertificate(route.certificate)]))
      console.log(formatTable(['ROUTE', 'SERVICE', 'REPLICA', 'STATE', 'CERTIFICATE'], rows))
    })
}
