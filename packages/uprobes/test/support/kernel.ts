// A booted guest kernel for uprobes tests, with the kernel package's fixture
// programs, and what the tests need to know of those programs: a symbol's
// address (the ELF symbol table, as `nm` reads it) and the file bytes at a
// virtual address (through the PT_LOAD that maps it).

import { copyFromUser, type Kernel, PT_LOAD, parseElf, readSymbols, type Task } from '@probekit/kernel'

// Booting is utrace's test helper (a kernel with files written in, its console captured).
export { type Booted, boot, fixture } from '../../../utrace/test/support/kernel.js'

/** `nm prog | awk '$3 == name'`: the symbol's address. */
export function symbol(elf: Uint8Array, name: string): number {
  const s = readSymbols(parseElf(elf)).find((x) => x.name === name)
  if (!s) throw new Error(`no symbol ${name}`)
  return s.value
}

/** The file offset a PT_LOAD maps at vaddr (what uprobe_events' OFFSET and uprobe_register mean). */
export function fileOffset(elf: Uint8Array, vaddr: number): number {
  const ph = parseElf(elf).programHeaders.find(
    (p) => p.type === PT_LOAD && vaddr >= p.vaddr && vaddr < p.vaddr + p.filesz,
  )
  if (!ph) throw new Error(`0x${vaddr.toString(16)} is not in the file`)
  return ph.offset + (vaddr - ph.vaddr)
}

/** The file's bytes that a PT_LOAD maps at vaddr. */
export function fileBytesAt(elf: Uint8Array, vaddr: number, len: number): Uint8Array {
  const off = fileOffset(elf, vaddr)
  return elf.slice(off, off + len)
}

export const textOf = (t: Task, vaddr: number, len: number): Uint8Array => copyFromUser(t.mm, vaddr, len)

/** The physical frame mapping vaddr in t (-1 if none). */
export function frameOf(t: Task, vaddr: number): number {
  return t.mm.space.lookup(vaddr - (vaddr % 4096))?.frame ?? -1
}

/** Run until every given task is a zombie (or the budget, in slices, runs out). */
export function runUntilDead(k: Kernel, tasks: Task[], budget = 200_000_000): void {
  for (let spent = 0; spent < budget && tasks.some((t) => t.state !== 'zombie'); spent += 1_000_000)
    k.run(1_000_000)
}
