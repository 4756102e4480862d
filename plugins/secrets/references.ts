// Secret references in service environments: `${secrets.NAME}` anywhere in a value, and valid names.
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
const REFERENCE = /\$\{secrets\.([^}]*)\}/g

/** The names a value refers to, in order of appearance (possibly invalid names, for validation). */
export function secretReferences (value: string): string[] {
  return [...value.matchAll(REFERENCE)].map(match => match[1])
}

/** `value` with each reference replaced by `lookup(name)`. */
export function replaceReferences (value: string, lookup: (name: string) => string): string {
  return value.replace(REFERENCE, (_match, name: string) => lookup(name))
}
