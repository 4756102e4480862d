// Reading one TOML/JSON table field by field: each getter checks a type and a rule and records a
// problem worded "<where>: <field> must be ...", and `finish()` reports the fields nobody asked for.
export type Table = Record<string, unknown>

export function isTable (value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export class Fields {
  readonly #table: Table
  /** Field-name prefix for nested tables, e.g. `liveness.`. */
  readonly #prefix: string
  readonly #problem: (message: string) => void
  readonly #seen = new Set<string>()

  constructor (table: Table, problem: (message: string) => void, prefix = '') {
    this.#table = table
    this.#problem = problem
    this.#prefix = prefix
  }

  /** Report `field` (with the nested prefix) and a reason. */
  fail (field: string, reason: string): undefined {
    this.#problem(`${this.#prefix}${field} ${reason}`)
    return undefined
  }

  /** Whether the table sets `key` at all (valid or not). */
  has (key: string): boolean {
    return this.#table[key] !== undefined
  }

  #take (key: string, required: boolean): unknown {
    this.#seen.add(key)
    const value = this.#table[key]
    if (value === undefined && required) this.fail(key, 'is required')
    return value
  }

  string (key: string, rule: { required?: boolean, pattern?: RegExp, hint?: string } = {}): string | undefined {
    const value = this.#take(key, rule.required === true)
    if (value === undefined) return undefined
    if (typeof value !== 'string' || value === '') return this.fail(key, 'must be a non-empty string')
    if (rule.pattern !== undefined && !rule.pattern.test(value)) return this.fail(key, `must be ${rule.hint ?? `of the form ${rule.pattern.source}`}, got ${JSON.stringify(value)}`)
    return value
  }

  integer (key: string, rule: { min: number, max?: number, required?: boolean }): number | undefined {
    const value = this.#take(key, rule.required === true)
    if (value === undefined) return undefined
    const range = rule.max === undefined ? `≥ ${rule.min}` : `from ${rule.min} to ${rule.max}`
    if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || (rule.max !== undefined && value > rule.max)) {
      return this.fail(key, `must be an integer ${range}, got ${JSON.stringify(value)}`)
    }
    return value
  }

  number (key: string, rule: { above: number }): number | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= rule.above) return this.fail(key, `must be a number > ${rule.above}, got ${JSON.stringify(value)}`)
    return value
  }

  boolean (key: string): boolean | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (typeof value !== 'boolean') return this.fail(key, `must be true or false, got ${JSON.stringify(value)}`)
    return value
  }

  /** An array of non-empty strings, each passing `check` (which returns a problem or undefined). */
  strings (key: string, check: (item: string) => string | undefined = () => undefined): string[] | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (!Array.isArray(value)) return this.fail(key, 'must be an array of strings')
    let ok = true
    value.forEach((item: unknown, i) => {
      const problem = typeof item !== 'string' || item === '' ? 'must be a non-empty string' : check(item)
      if (problem !== undefined) {
        this.fail(`${key}[${i}]`, problem)
        ok = false
      }
    })
    return ok ? value as string[] : undefined
  }

  /** A nested table read with its own Fields (same problem sink, prefixed names). */
  table (key: string): Fields | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (!isTable(value)) return this.fail(key, 'must be a table')
    return new Fields(value, this.#problem, `${this.#prefix}${key}.`)
  }

  /** The raw table under `key` (for maps such as env), or undefined after reporting a non-table. */
  map (key: string): Table | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (!isTable(value)) return this.fail(key, 'must be a table')
    return value
  }

  /** An array of tables, each read with its own Fields (`volumes[0].`). */
  tables (key: string): Fields[] | undefined {
    const value = this.#take(key, false)
    if (value === undefined) return undefined
    if (!Array.isArray(value) || !value.every(isTable)) return this.fail(key, 'must be an array of tables')
    return value.map((item, i) => new Fields(item, this.#problem, `${this.#prefix}${key}[${i}].`))
  }

  /** Report every field that no getter asked for. */
  finish (): void {
    for (const key of Object.keys(this.#table)) {
      if (!this.#seen.has(key)) this.fail(key, 'is not a known field')
    }
  }
}
