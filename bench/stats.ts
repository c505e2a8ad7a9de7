// Small statistics and markdown helpers for the benchmark tables.

/** The median of the numbers (NaN when empty). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The minimum of the numbers (NaN when empty). */
export function minimum(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

/** The maximum of the numbers (NaN when empty). */
export function maximum(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

/** A number with sensible precision for a table cell. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const magnitude = Math.abs(value);
  if (magnitude >= 100_000) return `${(value / 1000).toFixed(0)} k`;
  if (magnitude >= 1000) return value.toFixed(0).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Renders a markdown table. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
