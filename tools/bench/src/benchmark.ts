// What a package's bench script declares, and what running it yields.

/** One benchmark: a named quantity and how to obtain it. */
export interface Benchmark {
  /** Stable name; results are compared across runs by this key, so do not reword it lightly. */
  name: string
  /** Unit of the value `run` returns, e.g. 'ns/insn', 'MIPS', 'ms'. */
  unit: string
  /** Does the work and returns the value to report (usually computed with `measure`). */
  run: () => number | Promise<number>
}

/** One reported number. Exactly the keys of a `--json` line, in this order. */
export interface BenchResult {
  name: string
  value: number
  unit: string
}
