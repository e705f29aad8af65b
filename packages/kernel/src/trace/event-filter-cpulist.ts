// A filter's CPUS{cpulist}: the CPUs a list names, as cpulist_parse reads it
// (lib/bitmap-str.c's bitmap_parselist): comma-separated regions, each N,
// N-M or N-M:USED/GROUP (USED CPUs of every GROUP), where a number may be
// the letter N (the last CPU) and "all" is 0-N.

const MAX_DIGITS = 10

/** The CPUs below nbits that list names, or null when cpulist_parse fails (-EINVAL, -ERANGE). */
export function parseCpulist(list: string, nbits: number): Set<number> | null {
  const cpus = new Set<number>()
  const num = (s: string): number | null => {
    if (s === 'N') return nbits - 1
    return /^[0-9]+$/.test(s) && s.length <= MAX_DIGITS ? Number(s) : null
  }
  for (const raw of list.split(',')) {
    const region = raw.trim()
    if (region === '') continue
    const all = region.slice(0, 3).toLowerCase() === 'all'
    const m = /^([^-:/]+)(?:-([^-:/]+)(?::([^-:/]+)\/([^-:/]+))?)?$/.exec(
      all ? `0-N${region.slice(3)}` : region,
    )
    if (!m) return null
    const start = num(m[1])
    const end = m[2] === undefined ? start : num(m[2])
    if (start === null || end === null) return null
    const used = m[3] === undefined ? end - start + 1 : num(m[3])
    const group = m[4] === undefined ? end - start + 1 : num(m[4])
    // bitmap_check_region, then the range against nbits.
    if (used === null || group === null || start > end || group === 0 || used > group) return null
    if (end >= nbits) return null
    for (let c = start; c <= end; c++) if ((c - start) % group < used) cpus.add(c)
  }
  return cpus
}
