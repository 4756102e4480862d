// Policy diff: compare-policies compares two versions of a policy (given, or knowledge-base documents)
// clause by clause (clause-diff.ts) and summarises what changed in substance, from the rules or, with a
// generative provider, in prose from the prompt in modules/policy-diff/prompts/compare-policies.md. Stores nothing.
import { BadRequest, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, promptMessages, checkText, contentId, TextArg, type ModuleKit } from '../../module-kit.js'
import { diffPolicies, substanceLine, substanceLines, type PolicyDiff } from './clause-diff.js'
import { manifest } from './manifest.js'

/** Most changed, added and removed clauses sent to the generative provider. */
export const PROMPT_CHANGES = 60

const Version = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  text: Type.Optional(TextArg('the policy text')),
  document_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a knowledge-base document instead of text' }))
}, { additionalProperties: false })

const CompareArgs = Type.Object({ a: Version, b: Version }, { additionalProperties: false })

interface Side { title: string, text: string, document_id: string | null }

/** The version named by `field`: its text (413 beyond the limit) or a knowledge-base document (404 when unknown). */
function sideOf (kit: ModuleKit, field: 'a' | 'b', version: { title?: string, text?: string, document_id?: string }): Side {
  if ((version.text === undefined) === (version.document_id === undefined)) {
    throw new BadRequest(`invalid arguments: /${field}/text: give either text or document_id, not both or neither`)
  }
  if (version.text !== undefined) {
    checkText(`${field}/text`, version.text)
    return { title: version.title ?? (field === 'a' ? 'Version A' : 'Version B'), text: version.text, document_id: null }
  }
  const id = version.document_id as string
  const found = kit.kb.document(id)
  if (found === undefined) throw new NotFound(`no knowledge-base document "${id}"`)
  return { title: version.title ?? found.document.title, text: found.text, document_id: id }
}

/** The rule-based summary: the counts, then one line per change in substance. */
export function diffSummary (diff: PolicyDiff): string {
  const { counts } = diff
  const head = `[B] changes ${counts.changed} of the ${counts.clauses_a} clauses of [A] (${counts.substantive} in substance), adds ${counts.added} and removes ${counts.removed}; ${counts.unchanged} unchanged.`
  const lines = substanceLines(diff)
  return lines.length === 0 ? head : `${head} In substance: ${lines.join(' · ')}.`
}

export function policyDiffFunctions (kit: ModuleKit): ModuleFunction[] {
  const template = loadPrompt(import.meta.url, 'compare-policies')
  return [
    moduleFunction({
      name: 'compare-policies',
      args: CompareArgs,
      handler: async args => {
        const a = sideOf(kit, 'a', args.a)
        const b = sideOf(kit, 'b', args.b)
        const engine = await kit.language()
        const diff = diffPolicies(engine, a.text, b.text)
        let summary = diffSummary(diff)
        let producedBy = engine.name
        let method: 'rules' | 'generative' = 'rules'
        const answer = await generated(kit.generator, () => {
          const changes = [
            ...diff.clauses.filter(c => c.status === 'changed').map(c => `changed (${c.section_b ?? ''}): “${c.a ?? ''}” → “${c.b ?? ''}”${c.substantive ? ` — in substance: ${substanceLine(c.substance)}` : ''}`),
            ...diff.clauses.filter(c => c.status === 'added').map(c => `added (${c.section_b ?? ''}): “${c.b ?? ''}”`),
            ...diff.clauses.filter(c => c.status === 'removed').map(c => `removed (${c.section_a ?? ''}): “${c.a ?? ''}”`)
          ].slice(0, PROMPT_CHANGES)
          const counts = Object.entries(diff.counts).map(([k, v]) => `${k.replace('_', ' ')} ${v}`).join(', ')
          return promptMessages(template, { title_a: a.title, title_b: b.title, counts, changes: changes.length === 0 ? 'none: the versions are the same' : changes.join('\n') })
        }, 400)
        if (answer !== undefined) {
          summary = answer.text
          producedBy = answer.engine
          method = 'generative'
        }
        const cite = (label: string, side: Side): string => `[${label}] ${side.title}${side.document_id !== null ? ` (knowledge-base document ${side.document_id})` : ''}`
        return {
          a: { title: a.title, document_id: a.document_id },
          b: { title: b.title, document_id: b.document_id },
          ...diff,
          summary,
          summary_method: method,
          sources: [cite('A', a), cite('B', b)],
          resource_id: contentId(manifest.id, a.text, b.text),
          engine: producedBy
        }
      }
    })
  ]
}
