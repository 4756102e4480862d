// The canvassing module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'canvassing',
  title: 'Canvassing',
  blurb: 'Door-knocking and phone scripts on the local issues, with cited talking points.',
  group: 'Organise',
  functions: {
    'generate-script': ['staff', 'volunteer']
  }
}
