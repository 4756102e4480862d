// The admin module: its page in the navigation, its server functions with the roles that may call each, and what each role sees of its records.
import { ADMIN, type ModuleManifest } from '../manifest.js'

export const manifest = {
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
  },
  views: {
    user: {
      sub: ADMIN,
      email: ADMIN,
      name: ADMIN,
      role: ADMIN,
      last_login_at: ADMIN,
      logins: ADMIN
    }
  }
} satisfies ModuleManifest
