// Vite build of the campaign web UI into dist/campaign-ui, which the campaign plugin serves on the
// app listener.
import { uiConfig } from '../../../scripts/vite-ui.js'

export default uiConfig(new URL('.', import.meta.url), '/', 'campaign-ui')
