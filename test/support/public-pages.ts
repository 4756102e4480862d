// Helpers of the public pages' tests: a value read from a page's input, and a url-encoded form body.

/** The value of a hidden or text input in a page. */
export const inputValue = (html: string, name: string): string => new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1].replace(/&amp;/g, '&') ?? ''

/** A url-encoded form body; an array value sends the field once per item. */
export const form = (fields: Record<string, string | string[]>): string => {
  const body = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one)
  return body.toString()
}
