// The faction mapper module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'faction-mapper',
  title: 'Faction mapper',
  blurb: 'Factions of actors by their stances, and the topics of consensus and division.',
  group: 'Coalition',
  functions: {
    'map-factions': ['staff', 'readonly'],
    'consensus-finder': ['staff', 'readonly']
  }
}
