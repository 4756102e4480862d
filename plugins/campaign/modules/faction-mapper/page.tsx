// The faction mapper page: actors' statements (or the post stream's authors) in; the stance graph with
// its factions (map-factions) and the topics of consensus and division (consensus-finder) out.
import { useState } from 'preact/hooks'
import { useCall, type AuthInfo, FactionGraph, factionColor, type GraphEdge, type GraphNode, parseSpeakers, RangeFields, rangeArgs, speakerLines, Card, ErrorLine, Field } from '../../ui/src/module-kit.js'

interface Faction { faction_id: string, members: string[], positions: Array<{ topic: string, stance: number, members: number }> }
interface Factions { actors_from: string, topics: Array<{ topic: string, actors: number }>, factions: Faction[], unaligned: string[], nodes: GraphNode[], edges: GraphEdge[], engine: string }
interface Sides { topic: string, actors: number, support: string[], oppose: string[], neutral: string[], support_share: number, oppose_share: number }
interface Consensus { actors: number, consensus: Array<Sides & { stance: string, share: number }>, divisive: Array<Sides & { division: number }>, engine: string }

export const FACTION_EXAMPLE = speakerLines([
  { name: 'Ana', statements: ['We need more new housing near the station; new housing is great for young families.', 'Protected bike lanes make streets safe and healthy.', 'The public library deserves more funding, it is a wonderful place.'] },
  { name: 'Dan', statements: ['New housing towers would ruin our quiet neighbourhood.', 'Bike lanes are a dangerous waste of road space.', 'The library is a treasure and I support its funding.'] },
  { name: 'Ben', statements: ['I support new housing on every empty lot.', 'Bike lanes are a fantastic investment in safety.', 'Library funding helps every child, I support it.'] },
  { name: 'Eve', statements: ['I oppose new housing in our streets, the traffic is terrible.', 'Bike lanes have destroyed parking and hurt shops.', 'Library funding is money well spent, great value.'] },
  { name: 'Cara', statements: ['Bike lanes saved my life, I love them.', 'New housing downtown is a win for renters.', 'I am happy to back public library funding.'] },
  { name: 'Finn', statements: ['New housing projects are ugly and bad for the area.', 'I am against bike lanes on Main Street.', 'I love the public library and support the funding.'] }
])

const stance = (x: number): string => `${x > 0 ? '+' : ''}${x}`

export function FactionMapperPage ({ auth }: { auth: AuthInfo }) {
  const map = useCall<Factions>('map-factions')
  const consensus = useCall<Consensus>('consensus-finder')
  const [fromPosts, setFromPosts] = useState(false)
  const [text, setText] = useState('')
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const f = map.data
  const c = consensus.data
  const ids = f?.factions.map(x => x.faction_id) ?? []
  return (
    <>
      <h1>Faction mapper</h1>
      {auth.functions.includes('map-factions') && (
        <Card title="Actors">
          <form class="stack" onSubmit={e => {
            e.preventDefault()
            let args: object = rangeArgs(e.currentTarget)
            if (!fromPosts) {
              const { speakers, problem: bad } = parseSpeakers(text)
              setProblem(bad)
              if (bad !== undefined) return
              args = { actors: speakers }
            } else setProblem(undefined)
            void map.run(args)
            void consensus.run(args)
          }}>
            <p class="row">
              <label><input type="radio" name="actors-from" checked={!fromPosts} onChange={() => { setFromPosts(false) }} /> Statements</label>
              <label><input type="radio" name="actors-from" value="posts" checked={fromPosts} onChange={() => { setFromPosts(true) }} /> Authors of the post stream (2 posts or more)</label>
            </p>
            {fromPosts
              ? <RangeFields />
              : <Field label='One statement per line, "Actor: statement"'>
                  <textarea name="statements" rows={9} value={text} onInput={e => { setText(e.currentTarget.value) }} required placeholder={'Ana: I support new housing.\nDan: I oppose new housing.'} />
                </Field>}
            <p class="row">
              <button type="submit" disabled={map.busy || consensus.busy}>Map factions</button>
              {!fromPosts && <button type="button" class="ghost" onClick={() => { setText(FACTION_EXAMPLE) }}>Load an example</button>}
            </p>
          </form>
          <ErrorLine error={problem ?? map.error ?? consensus.error} />
        </Card>
      )}
      {f !== undefined && (
        <div data-testid="factions-result">
          <Card title={`${f.factions.length} faction(s) among ${f.nodes.length} actors`}>
            <FactionGraph nodes={f.nodes} edges={f.edges} />
            <p class="muted">Blue lines: alike stances; dashed red: opposed (|weight| ≥ 0.3 shown). Topics: {f.topics.map(t => t.topic).join(', ') || '—'} · {f.engine}</p>
            <ul class="results" data-testid="factions">
              {f.factions.map(x => (
                <li key={x.faction_id} data-faction={x.faction_id}>
                  <p><strong style={{ color: factionColor(ids, x.faction_id) }}>{x.faction_id}</strong> {x.members.join(', ')}</p>
                  <p class="muted">{x.positions.slice(0, 6).map(p => `${p.topic} ${stance(p.stance)}`).join(' · ') || 'no common topic'}</p>
                </li>
              ))}
            </ul>
            {f.unaligned.length > 0 && <p class="muted">Unaligned: {f.unaligned.join(', ')}</p>}
          </Card>
        </div>
      )}
      {c !== undefined && (
        <Card title="Consensus and division">
          <h3>Consensus</h3>
          {c.consensus.length === 0 && <p class="muted">No topic on which 75 % of the actors mentioning it agree.</p>}
          <ul data-testid="consensus">
            {c.consensus.map(x => <li key={x.topic} data-topic={x.topic}><strong>{x.topic}</strong>: {Math.round(x.share * 100)} % of {x.actors} {x.stance === 'support' ? 'support' : 'oppose'}</li>)}
          </ul>
          <h3>Divisive</h3>
          {c.divisive.length === 0 && <p class="muted">No topic splits the actors.</p>}
          <ul data-testid="divisive">
            {c.divisive.map(x => (
              <li key={x.topic} data-topic={x.topic}>
                <strong>{x.topic}</strong>: for {x.support.join(', ')} · against {x.oppose.join(', ')}{x.neutral.length > 0 ? ` · neutral ${x.neutral.join(', ')}` : ''}
              </li>
            ))}
          </ul>
        </Card>
      )}
    </>
  )
}
