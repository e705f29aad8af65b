// Wall-clock timing of a synchronous function: warm up, then take the median
// of repeated samples. The median, not the mean, so one GC pause or scheduler
// hiccup on a 2-core CI box does not move the number.

export interface MeasureOptions {
  /** Untimed calls first, so the JIT has compiled the code being measured. */
  warmup?: number
  /** Timed samples; the median of these is returned. */
  samples?: number
  /** Calls per sample; raise it when one call is close to the timer's resolution. */
  iterations?: number
  /** Clock in milliseconds; injectable so tests need not depend on real time. */
  now?: () => number
}

/** Median milliseconds per call of `fn`. */
export function measure(fn: () => unknown, options: MeasureOptions = {}): number {
  const { warmup = 5, samples = 21, iterations = 1, now = () => performance.now() } = options
  if (!(samples >= 1 && iterations >= 1 && warmup >= 0)) {
    throw new RangeError(`measure: need samples >= 1, iterations >= 1, warmup >= 0`)
  }
  for (let i = 0; i < warmup; i++) fn()
  const times: number[] = []
  for (let s = 0; s < samples; s++) {
    const start = now()
    for (let i = 0; i < iterations; i++) fn()
    times.push((now() - start) / iterations)
  }
  return median(times)
}

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list')
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Paired runs, for a probe's cost: `warmup` pairs thrown away, then `samples` pairs of a baseline
 * run followed by a probed one. Later runs get faster as V8 keeps optimising; comparing each probed
 * run with the baseline just before it keeps that drift out of the difference.
 */
export function pairedRuns<S>(
  warmup: number,
  samples: number,
  baseline: () => S,
  probed: () => S,
): { baseline: S; probed: S }[] {
  for (let w = 0; w < warmup; w++) {
    baseline()
    probed()
  }
  return Array.from({ length: samples }, () => {
    const b = baseline()
    return { baseline: b, probed: probed() }
  })
}

/** The median over pairs of what `f` makes of each. */
export function medianOf<T>(pairs: readonly T[], f: (p: T) => number): number {
  return median(pairs.map(f))
}
