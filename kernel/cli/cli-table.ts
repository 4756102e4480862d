// Plain-text tables for command output: columns padded to their widest cell.
export function formatTable (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map(row => row[i]?.length ?? 0)))
  const line = (cells: readonly string[]): string => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}
