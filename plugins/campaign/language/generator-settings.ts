// The generative provider from the [campaign] settings: none without generator_url; the key may be
// a ${secrets.NAME} reference, resolved through the secrets plugin (which must then be enabled). The
// secrets plugin belongs to another product: it is used through the one call needed here, so the app
// builds and runs without it.
import { StartupError } from '../../../kernel/index.js'
import type { CampaignConfig } from '../settings.js'
import { Generator } from './generator.js'

/** What the campaign needs of the secrets plugin's service: resolving ${secrets.NAME} references. */
export interface SecretResolver {
  resolve(env: Readonly<Record<string, string>>, service: string): Record<string, string>
}

export function generatorFrom (config: CampaignConfig, secrets: SecretResolver | undefined): Generator | undefined {
  if (config.generator_url === '') return undefined
  let apiKey = config.generator_api_key
  if (apiKey.includes('${secrets.')) {
    if (secrets === undefined) throw new StartupError('[campaign].generator_api_key names a secret, but the secrets plugin is not enabled')
    apiKey = secrets.resolve({ generator_api_key: apiKey }, 'campaign')['generator_api_key']
  }
  return new Generator({
    url: config.generator_url,
    model: config.generator_model,
    apiKey,
    timeoutMs: config.generator_timeout_seconds * 1000,
    concurrency: config.generator_concurrency,
    fallback: config.generator_fallback
  })
}
