// Image references: the tag that decides the pull rule, the form the engine lists local images under,
// and the registry a reference names.

/** The tag of `ref` ("latest" when none is written), or undefined for a digest reference. */
export function imageTag (ref: string): string | undefined {
  if (ref.includes('@')) return undefined
  const lastPart = ref.slice(ref.lastIndexOf('/') + 1)
  const colon = lastPart.indexOf(':')
  return colon === -1 ? 'latest' : lastPart.slice(colon + 1)
}

/** `ref` as the engine lists it among local images: default registry prefixes dropped, `:latest` added. */
export function localImageName (ref: string): string {
  const short = ref.replace(/^docker\.io\/library\//, '').replace(/^(docker\.io|index\.docker\.io)\//, '').replace(/^library\//, '')
  return imageTag(short) === 'latest' && !short.slice(short.lastIndexOf('/') + 1).includes(':') ? `${short}:latest` : short
}

/** The registry host `ref` names (`registry.example.com`, `127.0.0.1:5000`, `localhost`), or undefined for a short name (Docker Hub, or a local-only name). */
export function registryHost (ref: string): string | undefined {
  const slash = ref.indexOf('/')
  if (slash === -1) return undefined
  const first = ref.slice(0, slash)
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : undefined
}
