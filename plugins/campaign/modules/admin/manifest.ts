// The admin module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'admin',
  title: 'Admin',
  blurb: 'Health of the application, who has signed in, API tokens of external clients, and the audit log.',
  group: 'Administration',
  functions: {
    'admin-health': [],
    'admin-list-users': [],
    'admin-create-api-token': [],
    'admin-list-api-tokens': [],
    'admin-revoke-api-token': [],
    'audit-log': []
  }
}
