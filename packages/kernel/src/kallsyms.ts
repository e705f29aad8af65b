// kallsyms: the kernel's symbol table, from the guest image's .symtab.
// Name to address, address to "symbol+0xoff/0xsize", function boundaries.

import type { ElfSymbol } from './exec/elf.js'

export interface KernelSymbol {
  name: string
  /** Linear number. */
  address: number
  size: number
  /** 't'/'T' text, 'd'/'D' data, 'b'/'B' bss, 'r'/'R' rodata: lower case for local symbols, as /proc/kallsyms prints. */
  type: string
}

export interface SymbolLocation {
  symbol: KernelSymbol
  offset: number
}

export class Kallsyms {
  private readonly byName = new Map<string, KernelSymbol>()
  /** Sorted by address; functions and objects only. */
  private readonly sorted: KernelSymbol[]

  constructor(symbols: readonly KernelSymbol[]) {
    for (const s of symbols)
      if (!this.byName.has(s.name) || s.type === s.type.toUpperCase()) this.byName.set(s.name, s)
    this.sorted = [...symbols].sort((a, b) => a.address - b.address || b.size - a.size)
  }

  /** From ELF symbols; `kind(sym)` says which letter its section gives ('t', 'd', 'r', 'b') or null to skip it. */
  static fromElf(symbols: readonly ElfSymbol[], kind: (s: ElfSymbol) => string | null): Kallsyms {
    const out: KernelSymbol[] = []
    for (const s of symbols) {
      if (s.name === '' || s.type === 3 || s.type === 4) continue // sections, files
      const k = kind(s)
      if (k === null) continue
      out.push({ name: s.name, address: s.value, size: s.size, type: s.bind === 0 ? k : k.toUpperCase() })
    }
    return new Kallsyms(out)
  }

  /** kallsyms_lookup_name. */
  lookupName(name: string): number | undefined {
    return this.byName.get(name)?.address
  }

  symbol(name: string): KernelSymbol | undefined {
    return this.byName.get(name)
  }

  /** The symbol containing addr (a sized symbol covers [address, address+size); an unsized one reaches the next symbol). */
  lookup(addr: number): SymbolLocation | null {
    const a = this.sorted
    let lo = 0
    let hi = a.length - 1
    let best = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (a[mid].address <= addr) {
        best = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    // Several symbols may share an address: prefer a sized one that covers addr.
    for (let i = best; i >= 0 && i > best - 8; i--) {
      const s = a[i]
      if (s.size > 0 && addr < s.address + s.size) return { symbol: s, offset: addr - s.address }
    }
    if (best >= 0 && a[best].size === 0) return { symbol: a[best], offset: addr - a[best].address }
    return null
  }

  /** "symbol+0xoff/0xsize" as the kernel's %pS prints it, or the hex address when unknown. */
  format(addr: number): string {
    const loc = this.lookup(addr)
    if (!loc) return `0x${BigInt.asUintN(64, BigInt(addr)).toString(16)}`
    return `${loc.symbol.name}+0x${loc.offset.toString(16)}/0x${loc.symbol.size.toString(16)}`
  }

  /** The function (text symbol) containing addr. */
  functionAt(addr: number): KernelSymbol | null {
    const loc = this.lookup(addr)
    return loc &&
      (loc.symbol.type === 't' || loc.symbol.type === 'T') &&
      loc.offset < Math.max(loc.symbol.size, 1)
      ? loc.symbol
      : null
  }

  /** Every symbol, in address order (the /proc/kallsyms listing). */
  all(): readonly KernelSymbol[] {
    return this.sorted
  }
}
