// Minimal ELF64 (little-endian x86-64) reader: the executable code of a file.
//
// Sections flagged SHF_EXECINSTR are preferred (they exclude the ELF header
// that often shares the first executable PT_LOAD); files without section
// headers fall back to PT_LOAD segments with PF_X.

export interface CodeRegion {
  /** Section name ('.text', '.plt', ...) or 'PT_LOAD[i]'. */
  name: string
  /** Virtual address of bytes[0]. */
  address: number
  bytes: Uint8Array
}

const SHT_NOBITS = 8
const SHF_EXECINSTR = 0x4
const PT_LOAD = 1
const PF_X = 1
const EM_X86_64 = 62

export function isElf64(file: Uint8Array): boolean {
  return (
    file.length >= 64 &&
    file[0] === 0x7f &&
    file[1] === 0x45 &&
    file[2] === 0x4c &&
    file[3] === 0x46 &&
    file[4] === 2 &&
    file[5] === 1
  )
}

export function executableRegions(file: Uint8Array): CodeRegion[] {
  if (!isElf64(file)) throw new Error('not a little-endian ELF64 file')
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength)
  const u16 = (o: number) => dv.getUint16(o, true)
  const u32 = (o: number) => dv.getUint32(o, true)
  const u64 = (o: number) => Number(dv.getBigUint64(o, true))
  if (u16(18) !== EM_X86_64) throw new Error(`not x86-64 (e_machine ${u16(18)})`)
  const slice = (off: number, size: number) => file.subarray(off, Math.min(file.length, off + size))

  const shoff = u64(0x28)
  const shentsize = u16(0x3a)
  const shnum = u16(0x3c)
  const shstrndx = u16(0x3e)
  const regions: CodeRegion[] = []
  if (shoff !== 0 && shnum !== 0 && shoff + shnum * shentsize <= file.length) {
    const sh = (i: number) => shoff + i * shentsize
    const strOff = shstrndx < shnum ? u64(sh(shstrndx) + 0x18) : 0
    const name = (n: number) => {
      let end = strOff + n
      while (end < file.length && file[end] !== 0) end++
      return new TextDecoder().decode(file.subarray(strOff + n, end))
    }
    for (let i = 0; i < shnum; i++) {
      const b = sh(i)
      const type = u32(b + 4)
      const flags = u64(b + 8)
      if (!(flags & SHF_EXECINSTR) || type === SHT_NOBITS) continue
      const size = u64(b + 0x20)
      if (size === 0) continue
      regions.push({ name: name(u32(b)), address: u64(b + 0x10), bytes: slice(u64(b + 0x18), size) })
    }
    if (regions.length > 0) return regions
  }

  const phoff = u64(0x20)
  const phentsize = u16(0x36)
  const phnum = u16(0x38)
  for (let i = 0; i < phnum; i++) {
    const b = phoff + i * phentsize
    if (u32(b) !== PT_LOAD || !(u32(b + 4) & PF_X)) continue
    const filesz = u64(b + 0x20)
    if (filesz === 0) continue
    regions.push({ name: `PT_LOAD[${i}]`, address: u64(b + 0x10), bytes: slice(u64(b + 8), filesz) })
  }
  return regions
}
