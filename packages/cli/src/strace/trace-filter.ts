// strace's -e trace=SET qualifier: which system calls are printed. A SET is
// a comma-separated list of names, or !SET for all but those; 'all' and
// 'none' as strace takes them. Unknown names are the user's error.

import { SYSCALL_NAMES_64 } from '@probekit/kernel'
import { CliError } from '../cli-error.js'

const numberOf = new Map(Object.entries(SYSCALL_NAMES_64).map(([nr, name]) => [name, Number(nr)]))

/** The syscall numbers to print, or undefined for all of them. */
export function parseTraceQualifier(expr: string): Set<number> | undefined {
  const m = /^(?:t|trace)=(.*)$/.exec(expr)
  if (!m) throw new CliError(`-e ${expr}: only trace=NAME[,NAME...] (strace's syscall filter) is supported`)
  let set = m[1]
  const negate = set.startsWith('!')
  if (negate) set = set.slice(1)
  const chosen = new Set<number>()
  for (const name of set.split(',')) {
    if (name === 'all') for (const nr of numberOf.values()) chosen.add(nr)
    else if (name !== 'none') {
      const nr = numberOf.get(name)
      if (nr === undefined) throw new CliError(`-e ${expr}: invalid system call '${name}'`)
      chosen.add(nr)
    }
  }
  if (!negate) return chosen.size === numberOf.size ? undefined : chosen
  return new Set([...numberOf.values()].filter((nr) => !chosen.has(nr)))
}
