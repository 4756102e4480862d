// Migration 9: a BRIN index on metrics' receive time, so that a metric rule reads the last hour of the
// fleet's samples (metrics arrive in time order) without a scan of the day's partition; a BRIN index
// costs a write next to nothing.
export const metricsByTime = `
CREATE INDEX metrics_received_brin ON metrics USING brin (received_at);
`
