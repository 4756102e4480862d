// A device's metric chart: uPlot over the time range the page asked the API for (not the data's
// extent), with a gap where the samples stop for a while (the rule: plugins/ingest/README.md).
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

/** The answer of `GET /devices/{id}/metrics/points`: buckets of [from, to] with samples in them. */
export interface Points {
  from: number
  to: number
  points: Array<{ t: number, min: number, max: number, avg: number }>
}

/** Two consecutive points further apart than this many times the median spacing have a gap between them. */
const GAP_FACTOR = 3

/**
 * uPlot's data (x in seconds; min, max, avg), with a row of nulls midway between two consecutive
 * points more than GAP_FACTOR times the lower median spacing apart, which uPlot draws as a gap.
 */
function chartData (points: Points['points']): uPlot.AlignedData {
  const spacings = points.slice(1).map((p, i) => p.t - points[i].t).sort((a, b) => a - b)
  const median = spacings[Math.floor((spacings.length - 1) / 2)] ?? 0
  const x: number[] = []
  const avg: Array<number | null> = []
  const min: Array<number | null> = []
  const max: Array<number | null> = []
  points.forEach((p, i) => {
    const before = points[i - 1]
    if (before !== undefined && p.t - before.t > GAP_FACTOR * median) {
      x.push((before.t + p.t) / 2000)
      avg.push(null)
      min.push(null)
      max.push(null)
    }
    x.push(p.t / 1000)
    avg.push(p.avg)
    min.push(p.min)
    max.push(p.max)
  })
  return [x, min, max, avg]
}

/** Dots for the points a line cannot show (a gap or the data's end on both sides) when uPlot draws no dots. */
const alone: uPlot.Series.Points.Filter = (u, series, shown) => {
  if (shown) return null
  const ys: ArrayLike<number | null | undefined> = u.data[series]
  const has = (i: number): boolean => (ys[i] ?? null) !== null
  return Array.from(ys, (_, i) => has(i) && !has(i - 1) && !has(i + 1) ? i : -1).filter(i => i >= 0)
}

/** The chart's width on a wide screen, and the least it shrinks to. */
const CHART_WIDTH = 720
const MIN_CHART_WIDTH = 240

/** The chart's element carries its uPlot instance, for the browser's console and the dashboard test. */
type ChartElement = HTMLDivElement & { plot?: uPlot }

export function Chart ({ data }: { data: Points }) {
  const box = useRef<ChartElement>(null)
  useEffect(() => {
    const element = box.current
    if (element === null) return
    const range = { min: data.from / 1000, max: data.to / 1000 }
    const line = (label: string, stroke: string): uPlot.Series => ({ label, stroke, points: { filter: alone } })
    const plot = new uPlot({
      // As wide as its place allows (a phone), at most CHART_WIDTH.
      width: Math.max(MIN_CHART_WIDTH, Math.min(CHART_WIDTH, element.clientWidth)),
      height: 220,
      // A fixed x scale: zooming by dragging still works, and a double click goes back to the range.
      scales: { x: { time: true, auto: false, ...range } },
      cursor: { bind: { dblclick: u => () => { u.setScale('x', range); return null } } },
      // The average last, drawn over the minimum and maximum.
      series: [{}, line('min', '#94a3b8'), line('max', '#94a3b8'), line('avg', '#2563eb')]
    }, chartData(data.points), element)
    element.plot = plot
    return () => { plot.destroy(); delete element.plot }
  }, [data])
  return <div ref={box} class="chart" />
}
