// Seeded mutants of a probe definition (kprobe_events or uprobe_events line):
// characters deleted, the grammar's special characters (and NUL, non-ASCII)
// inserted or put in place, tokens duplicated, numbers made huge, the line cut
// short. Shared by the kernel's and the CLI's definition fuzz tests.

export const SPECIALS = [
  '(',
  ')',
  '+',
  '-',
  ':',
  '%',
  '$',
  '@',
  '[',
  ']',
  ',',
  '=',
  '"',
  '\\',
  '/',
  '.',
  '*',
  ' ',
  '\t',
  '\0',
  'é',
  '€',
  '😀',
  '\u202e',
  '\ufffd',
]
export const HUGE = [
  '18446744073709551616',
  '18446744073709551615',
  '0x10000000000000000',
  '1e400',
  '99999999999999999999999999',
  '-9223372036854775809',
  '0xffffffffffffffff',
  '4294967296',
  '9007199254740993',
]

/** Seeded mutants of one valid definition. */
export function mutateDefinition(line: string, rand: () => number, count: number): string[] {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]
  const out: string[] = []
  for (let k = 0; k < count; k++) {
    let s = line
    for (let steps = 1 + Math.floor(rand() * 3); steps > 0; steps--) {
      const i = Math.floor(rand() * (s.length + 1))
      switch (Math.floor(rand() * 6)) {
        case 0: // delete 1-4 characters
          s = s.slice(0, i) + s.slice(i + 1 + Math.floor(rand() * 4))
          break
        case 1: // insert a special character (or several)
          s = s.slice(0, i) + pick(SPECIALS).repeat(1 + Math.floor(rand() * 3)) + s.slice(i)
          break
        case 2: {
          // duplicate a token
          const toks = s.split(' ')
          const t = Math.floor(rand() * toks.length)
          toks.splice(t, 0, toks[t])
          s = toks.join(' ')
          break
        }
        case 3: {
          // a number becomes a huge one
          const nums = [...s.matchAll(/0x[0-9a-fA-F]+|\d+/g)]
          if (nums.length === 0) break
          const m = pick(nums)
          s = s.slice(0, m.index) + pick(HUGE) + s.slice((m.index ?? 0) + m[0].length)
          break
        }
        case 4: // cut short
          s = s.slice(0, i)
          break
        default: // a character replaced
          s = `${s.slice(0, i)}${pick(SPECIALS)}${s.slice(i + 1)}`
      }
    }
    out.push(s)
  }
  return out
}
