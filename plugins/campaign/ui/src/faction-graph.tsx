// The faction mapper's stance graph in plain SVG: each faction's members around its own centre, the
// centres on a ring, nodes coloured by faction (grey when unaligned), edges as thick as |weight|,
// blue where actors agree and dashed red where they oppose each other.

export interface GraphNode { name: string, faction_id: string | null }
export interface GraphEdge { a: string, b: string, weight: number }

const COLORS = ['#2457c5', '#d9822b', '#2e9e6a', '#9b51e0', '#c2185b', '#00838f', '#827717', '#5d4037']
const UNALIGNED = '#98a2b3'
const WIDTH = 600
const HEIGHT = 440
/** Edges weaker than this either way are left out, so the picture shows structure, not noise. */
const SHOWN = 0.3

export const factionColor = (factionIds: string[], id: string | null): string => id === null ? UNALIGNED : COLORS[factionIds.indexOf(id) % COLORS.length]

function layout (nodes: GraphNode[]): Map<string, { x: number, y: number }> {
  const groups = new Map<string, GraphNode[]>()
  for (const node of nodes) {
    const key = node.faction_id ?? `~${node.name}`
    groups.set(key, [...(groups.get(key) ?? []), node])
  }
  const clusters = [...groups.values()]
  const ring = clusters.length === 1 ? 0 : Math.min(WIDTH, HEIGHT) / 2 - 90
  const at = new Map<string, { x: number, y: number }>()
  clusters.forEach((members, c) => {
    const angle = (2 * Math.PI * c) / clusters.length - Math.PI / 2
    const cx = WIDTH / 2 + ring * Math.cos(angle)
    const cy = HEIGHT / 2 + ring * Math.sin(angle)
    const radius = members.length === 1 ? 0 : Math.min(70, 18 + 10 * members.length)
    members.forEach((node, i) => {
      const a = (2 * Math.PI * i) / members.length + angle
      at.set(node.name, { x: cx + radius * Math.cos(a), y: cy + radius * Math.sin(a) })
    })
  })
  return at
}

export function FactionGraph ({ nodes, edges }: { nodes: GraphNode[], edges: GraphEdge[] }) {
  const at = layout(nodes)
  const ids = [...new Set(nodes.flatMap(n => n.faction_id === null ? [] : [n.faction_id]))]
  return (
    <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} style={{ width: '100%', maxWidth: '44rem', fontSize: '11px', display: 'block' }} role="img" aria-label="Factions: actors linked by how alike their stances are" data-testid="faction-graph">
      {edges.filter(e => Math.abs(e.weight) >= SHOWN).map(e => {
        const [p, q] = [at.get(e.a), at.get(e.b)]
        if (p === undefined || q === undefined) return null
        return (
          <line key={`${e.a}|${e.b}`} x1={p.x} y1={p.y} x2={q.x} y2={q.y} stroke={e.weight > 0 ? '#4a7bd8' : '#d9534f'} stroke-opacity={0.25 + 0.5 * Math.abs(e.weight)}
            stroke-width={1 + 4 * Math.abs(e.weight)} stroke-dasharray={e.weight < 0 ? '5 4' : undefined} data-weight={e.weight}>
            <title>{`${e.a} – ${e.b}: ${e.weight}`}</title>
          </line>
        )
      })}
      {nodes.map(n => {
        const p = at.get(n.name) ?? { x: 0, y: 0 }
        return (
          <g key={n.name} data-node={n.name} data-faction={n.faction_id ?? ''}>
            <circle cx={p.x} cy={p.y} r={9} fill={factionColor(ids, n.faction_id)} stroke="#fff" stroke-width={2}><title>{`${n.name} (${n.faction_id ?? 'unaligned'})`}</title></circle>
            <text x={p.x} y={p.y + 22} text-anchor="middle" fill="#1d2433">{n.name.length > 18 ? `${n.name.slice(0, 17)}…` : n.name}</text>
          </g>
        )
      })}
    </svg>
  )
}
