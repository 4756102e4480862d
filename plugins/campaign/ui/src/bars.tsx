// Horizontal bar charts in plain SVG for the analysis pages: one bar per labelled value, drawn from
// zero (counts, scores) or, when signed, to either side of a centre line (polarity from −1 to 1).

export interface Bar { label: string, value: number }

const WIDTH = 560
const LABEL = 200
const VALUE = 64
const ROW = 24

export function Bars ({ bars, signed = false, max, testId, format = v => String(v) }: {
  bars: Bar[]
  signed?: boolean
  /** The value of a full bar (one side when signed); the largest magnitude when absent. */
  max?: number
  testId?: string
  format?: (value: number) => string
}) {
  if (bars.length === 0) return null
  const plot = WIDTH - LABEL - VALUE
  const top = max ?? Math.max(1e-9, ...bars.map(b => Math.abs(b.value)))
  const zero = signed ? LABEL + plot / 2 : LABEL
  const scale = (signed ? plot / 2 : plot) / top
  const height = bars.length * ROW + 4
  return (
    <svg class="bars" viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={bars.map(b => `${b.label}: ${format(b.value)}`).join('; ')} data-testid={testId}>
      {bars.map((bar, i) => {
        const width = Math.min(Math.abs(bar.value), top) * scale
        const y = i * ROW + 2
        return (
          <g key={`${bar.label}-${i}`} data-label={bar.label} data-value={bar.value}>
            <text x={LABEL - 8} y={y + 15} class="bar-label">{bar.label.length > 26 ? `${bar.label.slice(0, 25)}…` : bar.label}</text>
            <rect x={bar.value < 0 ? zero - width : zero} y={y + 3} width={width} height={ROW - 8} class={bar.value < 0 ? 'bar-negative' : 'bar-positive'} />
            <text x={WIDTH - VALUE + 8} y={y + 15} class="bar-value">{format(bar.value)}</text>
          </g>
        )
      })}
      {signed && <line x1={zero} x2={zero} y1={0} y2={height} class="bar-axis" />}
    </svg>
  )
}
