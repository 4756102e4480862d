// Vite build of the telemetry dashboard into dist/telemetry-ui, which the ingest plugin serves under
// /dashboard on the telemetry listener.
import { uiConfig } from '../../../scripts/vite-ui.js'

export default uiConfig(new URL('.', import.meta.url), '/dashboard/', 'telemetry-ui')
