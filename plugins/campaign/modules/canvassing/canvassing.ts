// Canvassing: generate-script writes a door-knocking or phone script on given issues, or on the most
// urgent local issues of the post stream at a place, with talking points cited from the knowledge base
// (canvass-script.ts), or with the generative provider (prompts/generate-script.md). Stores nothing.
import { BadRequest } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, generated, loadPrompt, promptMessages, loadTemplates, Citations, marked, resourceHash, sourceLines, type ModuleKit } from '../../module-kit.js'
import { composeScript, MAX_GIVEN_ISSUES, placePosts, scriptIssues, scriptText, ScriptTemplates, type Script, type ScriptMode } from './canvass-script.js'


const ScriptArgs = Type.Object({
  topic: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'one issue to talk about' })),
  issues: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: MAX_GIVEN_ISSUES, description: 'the issues to talk about' })),
  location: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the neighbourhood or town canvassed: its local issues come from the post stream' })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  mode: Type.Union([Type.Literal('door'), Type.Literal('phone')], { default: 'door' })
}, { additionalProperties: false })

/** The issues and objections as the prompt lists them. */
function promptLines (script: Script): { issues: string, objections: string } {
  return {
    issues: script.issues.map((issue, i) => [
      `${i + 1}. ${issue.issue}${issue.local !== null ? ` (raised in ${issue.local.mentions} local posts${issue.local.quote !== null ? `, e.g. “${issue.local.quote}”` : ''})` : ''}`,
      ...(issue.talking_points.length > 0 ? issue.talking_points.map(p => `   - ${marked(p)}`) : ['   - no talking point: listen and take notes'])
    ].join('\n')).join('\n'),
    objections: script.objections.map(o => `- “${o.objection}” → ${o.response}`).join('\n')
  }
}

export function canvassingFunctions (kit: ModuleKit): ModuleFunction[] {
  const templates = loadTemplates(import.meta.url, 'canvassing', ScriptTemplates)
  const prompt = loadPrompt(import.meta.url, 'generate-script')
  return [
    moduleFunction({
      name: 'generate-script',
      args: ScriptArgs,
      handler: async (args, { session }) => {
        const given = [...new Set([...(args.issues ?? []), ...(args.topic !== undefined ? [args.topic] : [])].map(i => i.trim()).filter(i => i !== ''))]
        const location = args.location?.trim() || undefined
        if (given.length === 0 && location === undefined) throw new BadRequest('invalid arguments: /issues: give the issues (or a topic) to talk about, or a location to take its local issues from')
        if (given.length > MAX_GIVEN_ISSUES) throw new BadRequest(`invalid arguments: /issues: at most ${MAX_GIVEN_ISSUES} issues with the topic`)
        const engine = await kit.language()
        const texts = location === undefined ? undefined : placePosts(await kit.posts.list(undefined, undefined), location)
        const issues = scriptIssues(engine, given, texts)
        const citations = new Citations()
        const request = { mode: args.mode as ScriptMode, volunteer: session?.name || 'a volunteer', location, audience: args.audience?.trim() || undefined }
        const script = composeScript(engine, kit.kb, templates, citations, request, issues)
        const notes = [
          ...(texts !== undefined && given.length === 0 && issues.length === 0 ? [`No post from ${location} raises an issue of the lexicon (${texts.length} posts read): give the issues to talk about.`] : []),
          ...(issues.length > 0 && citations.passages.length === 0 ? ['The knowledge base has nothing on these issues: the script has no talking points, so that nothing is invented.'] : [])
        ]
        const base = {
          resource_id: resourceHash('script', { mode: request.mode, location: location?.toLowerCase(), audience: request.audience?.toLowerCase(), issues: issues.map(i => i.issue), cited: citations.passages.map(p => `${p.document_id}#${p.passage}`) }),
          mode: request.mode,
          location: location ?? '',
          audience: request.audience ?? '',
          posts_read: texts?.length ?? 0,
          ...script,
          sources: citations.passages,
          citation_lines: citations.lines,
          ...(notes.length > 0 ? { note: notes.join(' ') } : {})
        }
        const answer = issues.length === 0 ? undefined : await generated(kit.generator, () => promptMessages(prompt, {
          mode: request.mode, location: location ?? 'not given', audience: request.audience ?? 'not given', greeting: script.greeting, close: script.close,
          ...promptLines(script), sources: citations.passages.length === 0 ? 'none' : sourceLines(citations.passages)
        }), 1200)
        if (answer !== undefined) return { ...base, script: answer.text, method: 'generative', engine: answer.engine }
        return { ...base, script: scriptText(script, citations.lines), method: 'extractive', engine: engine.name }
      }
    })
  ]
}
