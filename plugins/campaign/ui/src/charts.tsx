// Charts of the campaign pages: a time series drawn with uPlot (one or more lines over UTC time).
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

export interface Line { label: string, values: Array<number | null>, color: string }

/** Lines over time; `times` are ISO 8601 instants, one per value. */
export function TimeChart ({ times, lines, height = 220, testId }: { times: string[], lines: Line[], height?: number, testId?: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current
    if (element === null || times.length === 0) return
    const plot = new uPlot({
      width: Math.max(320, element.clientWidth),
      height,
      series: [{}, ...lines.map(line => ({ label: line.label, stroke: line.color, width: 2, points: { show: times.length < 60 } }))],
      axes: [{}, { size: 50 }]
    }, [times.map(t => Date.parse(t) / 1000), ...lines.map(line => line.values)], element)
    return () => { plot.destroy() }
  }, [times, lines, height])
  return <div class="chart" ref={box} data-testid={testId} />
}
