// The secrets plugin's contract with the plugins that refer to secrets (reconciler, notifications):
// what a secret's name may be and how `${secrets.NAME}` references are found in a value. Other
// plugins import the secrets plugin through this module or its index only.
export { SECRET_NAME, secretReferences } from './references.js'
