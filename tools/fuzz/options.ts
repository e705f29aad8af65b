// The long-run scripts' option checks: a bad option is one line and exit 2.

export function optionChecks(tool: string) {
  const fail = (message: string): never => {
    console.error(`${tool}: ${message}`)
    process.exit(2)
  }
  const integer = (name: string, value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n < 0) fail(`--${name} wants a non-negative integer, got '${value}'`)
    return n
  }
  return { fail, integer }
}
