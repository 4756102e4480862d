// Image references: the tag that decides the pull rule, and the form the engine lists local images under.

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
