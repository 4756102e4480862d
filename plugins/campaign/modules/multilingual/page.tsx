// The multilingual page: translate-content, with what was and was not translated shown plainly (the
// words the glossary does not cover are highlighted), how much of the text was covered, its sources and thumbs up or down.
import { useCall, type AuthInfo, Feedback, Card, ErrorLine, Field, formValue } from '../../ui/src/module-kit.js'
import { manifest } from './manifest.js'

/** Languages offered; the campaign glossary covers en, es, fr and de, a generative provider any of them. */
const LANGUAGES: Array<[string, string]> = [['es', 'Spanish'], ['fr', 'French'], ['de', 'German'], ['en', 'English'], ['pt', 'Portuguese'], ['it', 'Italian'],
  ['zh', 'Chinese'], ['vi', 'Vietnamese'], ['ko', 'Korean'], ['tl', 'Tagalog'], ['ar', 'Arabic'], ['ru', 'Russian']]

interface Translation {
  translation: string, translated: 'full' | 'partial' | 'none', method: string, source_language: string, target_language: string
  detected: { language: string, confidence: number } | null, coverage: number, note: string
  segments: Array<{ text: string, kind: 'glossary' | 'kept' | 'untranslated', output: string }>
  sources: string[], resource_id: string, engine: string
}

/** The share of the words translated, as a filled bar. */
function Coverage ({ share }: { share: number }) {
  return (
    <svg viewBox="0 0 400 28" style={{ width: '100%', maxWidth: '26rem', display: 'block' }} role="img" aria-label={`${Math.round(share * 100)} % of the words translated`} data-testid="translation-coverage">
      <rect x={0} y={4} width={400} height={14} rx={4} fill="#eef0f4" />
      <rect x={0} y={4} width={400 * share} height={14} rx={4} fill={share === 1 ? '#4a7bd8' : '#f0a040'} />
      <text x={0} y={27} font-size="9" fill="currentColor">{Math.round(share * 100)} % of the words translated</text>
    </svg>
  )
}

function TranslationView ({ result, auth }: { result: Translation, auth: AuthInfo }) {
  const level = result.translated === 'full' ? 'low' : result.translated === 'partial' ? 'medium' : 'high'
  return (
    <article class="letter" data-testid="translation-result" data-translated={result.translated}>
      <p>
        <span class={`badge level-${level}`} data-testid="translation-status">{result.translated === 'full' ? 'translated' : result.translated === 'partial' ? 'partly translated' : 'not translated'}</span>
        <span class="muted"> {result.source_language}{result.detected !== null ? ` (detected, ${result.detected.confidence})` : ''} → {result.target_language} · {result.method}</span>
      </p>
      <p data-testid="translation-note">{result.note}</p>
      {result.segments.length > 0
        ? <pre data-testid="translation">{result.segments.map((s, i) => s.kind === 'untranslated' ? <mark key={i} title="not translated">{s.text}</mark> : <span key={i}>{s.output}</span>)}</pre>
        : result.translation !== '' && <pre data-testid="translation">{result.translation}</pre>}
      {result.method === 'glossary' && <Coverage share={result.coverage} />}
      {result.sources.length > 0 && <ol class="muted" data-testid="translation-sources">{result.sources.map(line => <li key={line}>{line}</li>)}</ol>}
      <p class="muted">Produced by {result.engine}</p>
      <Feedback auth={auth} moduleId={manifest.id} resourceId={result.resource_id} />
    </article>
  )
}

export function MultilingualPage ({ auth }: { auth: AuthInfo }) {
  const translate = useCall<Translation>('translate-content')
  return (
    <>
      <h1>Multilingual</h1>
      <Card title="Translate campaign content">
        <form class="stack" onSubmit={e => {
          e.preventDefault()
          const form = e.currentTarget
          const source = formValue(form, 'source_language')
          void translate.run({ text: formValue(form, 'text'), target_language: formValue(form, 'target_language'), ...(source !== '' ? { source_language: source } : {}) })
        }}>
          <Field label="Text"><textarea name="text" rows={6} required placeholder="Vote for Maria Lopez on Election Day! Find your polling place." /></Field>
          <div class="grid">
            <Field label="Into"><select name="target_language">{LANGUAGES.map(([code, name]) => <option key={code} value={code}>{name}</option>)}</select></Field>
            <Field label="From"><select name="source_language"><option value="">detect</option>{LANGUAGES.map(([code, name]) => <option key={code} value={code}>{name}</option>)}</select></Field>
          </div>
          <button type="submit" disabled={translate.busy}>Translate</button>
        </form>
        <ErrorLine error={translate.error} />
        {translate.data !== undefined && <TranslationView result={translate.data} auth={auth} />}
      </Card>
    </>
  )
}
