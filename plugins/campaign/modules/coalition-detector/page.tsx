// The coalition detector page: member groups' statements in, tensions out (detect-tensions) — a matrix
// of the pairs coloured by tension, the strongest tensions as bars, and each with quotes of both sides.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, Bars, parseSpeakers, speakerLines, Card, ErrorLine, Field } from '../../ui/src/module-kit.js'

interface Tension { group_a: string, group_b: string, topic: string, stance_a: number, stance_b: number, difference: number, weight: number, score: number, evidence_a: string[], evidence_b: string[] }
interface Pair { group_a: string, group_b: string, shared_topics: number, tensions: number, agreements: number, tension_score: number, alignment: number, top_topic: string | null }
interface Result {
  groups: Array<{ name: string, clauses: number, topics: number }>
  topics: Array<{ topic: string, groups: number, mentions: number, weight: number }>
  tensions: Tension[], pairs: Pair[], engine: string
}

export const COALITION_EXAMPLE = speakerLines([
  { name: 'Riverside Labour Union', statements: ['We strongly support raising the minimum wage to $20 an hour.', 'A higher minimum wage is fair to working families and good for the city.', 'We support more frequent public transit.'] },
  { name: 'Chamber of Small Business', statements: ['We oppose any increase in the minimum wage.', 'A $20 minimum wage would hurt small shops and kill jobs.', 'We support public transit because customers need a reliable way downtown.'] },
  { name: 'Green Neighbours', statements: ['Better public transit is great for clean air.', 'We support new trees in every park and more public transit.'] }
])

const CELL = 52
const LABEL = 150
/** Room right of the matrix for the slanted column labels. */
const SLANT = 90

/** A group's initials ("Riverside Labour Union" → RLU), to keep chart labels short. */
const initials = (name: string): string => name.split(/\s+/).filter(w => /^\p{Lu}/u.test(w)).map(w => w[0]).join('') || name.slice(0, 3)

/** Groups × groups: each pair's cell reddens with its tension score and shows its number of tensions. */
function PairMatrix ({ groups, pairs }: { groups: string[], pairs: Pair[] }) {
  const max = Math.max(1e-9, ...pairs.map(p => p.tension_score))
  const pairAt = (a: string, b: string): Pair | undefined => pairs.find(p => (p.group_a === a && p.group_b === b) || (p.group_a === b && p.group_b === a))
  const size = LABEL + groups.length * CELL
  const width = size + SLANT
  const short = (name: string): string => name.length > 20 ? `${name.slice(0, 19)}…` : name
  return (
    <svg viewBox={`0 0 ${width} ${size}`} style={{ width: '100%', maxWidth: `${Math.max(20, width / 14)}rem`, fontSize: '11px', display: 'block' }} role="img" aria-label="Tension between each pair of groups" data-testid="pair-matrix">
      {groups.map((g, i) => (
        <g key={g}>
          <text x={LABEL - 6} y={LABEL + i * CELL + CELL / 2 + 4} text-anchor="end" fill="currentColor">{short(g)}</text>
          <text x={0} y={0} text-anchor="start" fill="currentColor" transform={`translate(${LABEL + i * CELL + CELL / 2 + 4} ${LABEL - 6}) rotate(-60)`}>{short(g)}</text>
        </g>
      ))}
      {groups.map((a, i) => groups.map((b, j) => {
        const pair = i === j ? undefined : pairAt(a, b)
        const heat = pair === undefined ? 0 : pair.tension_score / max
        return (
          <g key={`${a}|${b}`} data-pair={pair === undefined ? undefined : `${a}|${b}`} data-tensions={pair?.tensions}>
            <rect x={LABEL + j * CELL} y={LABEL + i * CELL} width={CELL - 2} height={CELL - 2} rx={3}
              fill={i === j ? '#f2f4f7' : `rgba(217, 83, 79, ${0.08 + 0.82 * heat})`}>
              <title>{pair === undefined ? a : `${a} – ${b}: ${pair.tensions} tension(s), score ${pair.tension_score}, alignment ${pair.alignment}`}</title>
            </rect>
            {pair !== undefined && <text x={LABEL + j * CELL + CELL / 2 - 1} y={LABEL + i * CELL + CELL / 2 + 3} text-anchor="middle" fill={heat > 0.5 ? '#fff' : '#1d2433'}>{pair.tensions}</text>}
          </g>
        )
      }))}
    </svg>
  )
}

export function CoalitionDetectorPage ({ auth }: { auth: AuthInfo }) {
  const detect = useCall<Result>('detect-tensions')
  const [text, setText] = useState('')
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const r = detect.data
  return (
    <>
      <h1>Coalition detector</h1>
      {auth.functions.includes('detect-tensions') && (
        <Card title="Member groups and their statements">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            const { speakers, problem: bad } = parseSpeakers(text)
            setProblem(bad)
            if (bad === undefined) void detect.run({ groups: speakers })
          }}>
            <Field label='One statement per line, "Group: statement" (2 to 20 groups)'>
              <textarea name="statements" rows={9} value={text} onInput={e => { setText(e.currentTarget.value) }} required placeholder={'Tenants Union: We support rent control.\nLandlord Association: We oppose rent control.'} />
            </Field>
            <p class="row">
              <button type="submit" disabled={detect.busy}>Detect tensions</button>
              <button type="button" class="ghost" onClick={() => { setText(COALITION_EXAMPLE) }}>Load an example</button>
            </p>
          </form>
          <ErrorLine error={problem ?? detect.error} />
        </Card>
      )}
      {r !== undefined && (
        <div data-testid="tensions-result">
          <Card title="Where the coalition pulls apart">
            {r.tensions.length === 0
              ? <p class="muted" data-testid="no-tensions">No tension: on the {r.topics.length} shared topic(s) the groups stand alike.</p>
              : <Bars testId="tension-chart" bars={r.tensions.slice(0, 10).map(t => ({ label: `${t.topic} (${initials(t.group_a)}–${initials(t.group_b)})`, value: t.score }))} />}
            <PairMatrix groups={r.groups.map(g => g.name)} pairs={r.pairs} />
            <p class="muted">Cells: tensions per pair, redder for a higher total score. Shared topics: {r.topics.map(t => `${t.topic} (${t.groups})`).join(', ') || '—'} · {r.engine}</p>
          </Card>
          <Card title="Tensions">
            <ol class="results" data-testid="tensions">
              {r.tensions.map(t => (
                <li key={`${t.group_a}|${t.group_b}|${t.topic}`} data-topic={t.topic} data-pair={`${t.group_a}|${t.group_b}`}>
                  <p><strong>{t.topic}</strong> — {t.group_a} <span class={t.stance_a < 0 ? 'negative' : 'positive'}>{t.stance_a}</span> vs {t.group_b} <span class={t.stance_b < 0 ? 'negative' : 'positive'}>{t.stance_b}</span> <span class="muted">· score {t.score} (difference {t.difference} × weight {t.weight})</span></p>
                  {t.evidence_a.map(q => <p key={q} class="muted">{t.group_a}: “{q}”</p>)}
                  {t.evidence_b.map(q => <p key={q} class="muted">{t.group_b}: “{q}”</p>)}
                </li>
              ))}
            </ol>
            <table data-testid="pairs">
              <thead><tr><th>Pair</th><th>Shared topics</th><th>Tensions</th><th>Agreements</th><th>Alignment</th><th>Sharpest</th></tr></thead>
              <tbody>{r.pairs.map(p => (
                <tr key={`${p.group_a}|${p.group_b}`}><td>{p.group_a} – {p.group_b}</td><td>{p.shared_topics}</td><td>{p.tensions}</td><td>{p.agreements}</td><td>{p.alignment}</td><td>{p.top_topic ?? '—'}</td></tr>
              ))}</tbody>
            </table>
          </Card>
        </div>
      )}
    </>
  )
}
