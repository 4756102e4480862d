// Charts of the campaign pages: a time series drawn with uPlot (one or more lines over UTC time) on a
// regular axis, so steps without data are gaps in the lines (series.ts), sized to its container.
import { useEffect, useMemo, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { isolated, regularSlots } from './series.js'

export interface Line { label: string, values: Array<number | null>, color: string }

/** Lines over time; `times` are ISO 8601 bucket starts, one per value, `stepSeconds` apart at most. */
export function TimeChart ({ times, lines, stepSeconds, height = 220, testId }: { times: string[], lines: Line[], stepSeconds: number, height?: number, testId?: string }) {
  const box = useRef<HTMLDivElement>(null)
  const slots = useMemo(() => regularSlots(times.map((time, index) => ({ time, index })), point => point.time, stepSeconds), [times, stepSeconds])
  const data = useMemo(() => lines.map(line => slots.map(slot => slot.item === undefined ? null : line.values[slot.item.index])), [lines, slots])
  useEffect(() => {
    const element = box.current
    if (element === null || slots.length === 0) return
    const plot = new uPlot({
      width: element.clientWidth,
      height,
      series: [{}, ...lines.map((line, i) => ({
        label: line.label,
        stroke: line.color,
        width: 2,
        points: { show: slots.length < 60, filter: (_u: uPlot, _series: number, show: boolean) => show ? null : isolated(data[i]) }
      }))],
      axes: [{}, { size: 50 }]
    }, [slots.map(slot => slot.at), ...data], element)
    const resize = new ResizeObserver(() => { plot.setSize({ width: element.clientWidth, height }) })
    resize.observe(element)
    return () => { resize.disconnect(); plot.destroy() }
  }, [slots, data, lines, height])
  return <div class="chart" ref={box} data-testid={testId} data-slots={slots.length} data-gaps={slots.filter(slot => slot.item === undefined).length} />
}
