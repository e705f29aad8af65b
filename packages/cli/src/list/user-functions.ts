// The functions of a user program or library (perf probe -x BINARY --funcs):
// its defined STT_FUNC symbols, from .symtab, or from .dynsym when the file
// is stripped (as the host's libraries are).

import { parseElf, readDynamicSymbols, readSymbols } from '@probekit/kernel'

const STT_FUNC = 2
const SHN_UNDEF = 0

export interface UserFunction {
  name: string
  /** The symbol's value: a virtual address (a file offset relative to the load base for PIE and libraries). */
  value: number
  size: number
}

export function userFunctions(bytes: Uint8Array): UserFunction[] {
  const elf = parseElf(bytes)
  let symbols = readSymbols(elf)
  if (symbols.length === 0) symbols = readDynamicSymbols(elf)
  const seen = new Map<string, UserFunction>()
  for (const s of symbols)
    if (s.type === STT_FUNC && s.shndx !== SHN_UNDEF && s.name !== '' && !seen.has(s.name))
      seen.set(s.name, { name: s.name, value: s.value, size: s.size })
  return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
