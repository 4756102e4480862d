// The module pages the UI knows, made from the modules' manifests (pages.ts): their paths,
// titles and blurbs, and the groups the navigation and the home page show them in.
import { MODULE_GROUPS, type ModuleGroup } from '../../modules/manifest.js'
import { MANIFESTS } from './pages.js'

export interface ModulePage {
  id: string
  path: string
  title: string
  blurb: string
  group: ModuleGroup
}

export const MODULE_PAGES: ModulePage[] = MANIFESTS.map(({ id, title, blurb, group }) => ({ id, path: `/${id}`, title, blurb, group }))

/** The groups with the pages among `visible`, in group order; empty groups left out. */
export function groupedPages (visible: readonly ModulePage[]): Array<{ title: string, pages: ModulePage[] }> {
  return MODULE_GROUPS
    .map(title => ({ title, pages: visible.filter(page => page.group === title) }))
    .filter(group => group.pages.length > 0)
}
