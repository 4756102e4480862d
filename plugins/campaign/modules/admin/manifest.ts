// The admin module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'admin',
  title: 'Admin',
  blurb: 'Health of the application and who has signed in.',
  group: 'Administration',
  functions: {
    'admin-health': [],
    'admin-list-users': []
  }
}
