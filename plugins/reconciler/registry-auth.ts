// Credentials for private registries, from the engine's credential file on the host (the
// `auths` of ~/.docker/config.json that `docker login` writes), looked up by the image's registry.
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export interface RegistryCredentials {
  username: string
  password: string
  serveraddress: string
}

const DOCKER_HUB = 'docker.io'

/** The registry host of an image reference: its first component when it looks like a host, else Docker Hub. */
export function registryOf (ref: string): string {
  const first = ref.split('/')[0]
  return ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : DOCKER_HUB
}

/** `https://index.docker.io/v1/` → `docker.io`; `https://reg.example.com:5000/x` → `reg.example.com:5000`. */
function keyHost (key: string): string {
  const host = key.replace(/^[a-z]+:\/\//, '').split('/')[0]
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? DOCKER_HUB : host
}

/** The credentials `config` (the parsed config.json) holds for the registry of `ref`, if any. */
export function credentialsFor (ref: string, config: unknown): RegistryCredentials | undefined {
  const auths = (config as { auths?: Record<string, { auth?: unknown }> } | undefined)?.auths ?? {}
  const registry = registryOf(ref)
  for (const [key, entry] of Object.entries(auths)) {
    if (keyHost(key) !== registry || typeof entry?.auth !== 'string') continue
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), serveraddress: key }
  }
  return undefined
}

/** The credential file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
export function dockerConfigFile (env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json')
}

/** Read the credential file; absent or unreadable means no credentials. */
export function readDockerConfig (file: string): unknown {
  if (!existsSync(file)) return undefined
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}
