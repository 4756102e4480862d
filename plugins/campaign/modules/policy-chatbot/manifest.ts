// The policy chatbot module: its page in the navigation, and its server functions with the roles that may call each.
import type { ModuleManifest } from '../manifest.js'

export const manifest: ModuleManifest = {
  id: 'policy-chatbot',
  title: 'Policy chatbot',
  blurb: 'Answers about our policies from the policy documents, cited, in conversations you can resume.',
  group: 'Message',
  functions: {
    'policy-ingest': ['staff'],
    'policy-chat': ['staff', 'volunteer'],
    'list-policy-sessions': ['staff', 'volunteer']
  }
}
