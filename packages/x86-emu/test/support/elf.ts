// Minimal ELF64 reader for test fixtures: the entry point and PT_LOAD segments.

export interface LoadSegment {
  vaddr: number
  memsz: number
  data: Uint8Array
  flags: { r: boolean; w: boolean; x: boolean }
}

export function readElf(bytes: Uint8Array): { entry: number; segments: LoadSegment[] } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (v.getUint32(0, false) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1)
    throw new Error('not a little-endian ELF64 file')
  const entry = Number(v.getBigUint64(24, true))
  const phoff = Number(v.getBigUint64(32, true))
  const phentsize = v.getUint16(54, true)
  const phnum = v.getUint16(56, true)
  const segments: LoadSegment[] = []
  for (let i = 0; i < phnum; i++) {
    const o = phoff + i * phentsize
    if (v.getUint32(o, true) !== 1) continue
    const flags = v.getUint32(o + 4, true)
    const off = Number(v.getBigUint64(o + 8, true))
    const vaddr = Number(v.getBigUint64(o + 16, true))
    const filesz = Number(v.getBigUint64(o + 32, true))
    const memsz = Number(v.getBigUint64(o + 40, true))
    segments.push({
      vaddr,
      memsz,
      data: bytes.subarray(off, off + filesz),
      flags: { r: (flags & 4) !== 0, w: (flags & 2) !== 0, x: (flags & 1) !== 0 },
    })
  }
  return { entry, segments }
}

/** Address of a symbol from .symtab, or undefined. */
export function findSymbol(bytes: Uint8Array, name: string): number | undefined {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const shoff = Number(v.getBigUint64(40, true))
  const shentsize = v.getUint16(58, true)
  const shnum = v.getUint16(60, true)
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize
    if (v.getUint32(o + 4, true) !== 2) continue // SHT_SYMTAB
    const off = Number(v.getBigUint64(o + 24, true))
    const size = Number(v.getBigUint64(o + 32, true))
    const strtab = shoff + v.getUint32(o + 40, true) * shentsize
    const stroff = Number(v.getBigUint64(strtab + 24, true))
    for (let s = off; s < off + size; s += 24) {
      let n = stroff + v.getUint32(s, true)
      let str = ''
      while (bytes[n] !== 0) str += String.fromCharCode(bytes[n++])
      if (str === name) return Number(v.getBigUint64(s + 8, true))
    }
  }
  return undefined
}

/** Copy of an ELF with a 32-bit initialised global set (for parameterised fixtures). */
export function patchGlobal32(bytes: Uint8Array, name: string, value: number): Uint8Array {
  const addr = findSymbol(bytes, name)
  if (addr === undefined) throw new Error(`no symbol ${name}`)
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const phoff = Number(v.getBigUint64(32, true))
  for (let i = 0; i < v.getUint16(56, true); i++) {
    const o = phoff + i * v.getUint16(54, true)
    const vaddr = Number(v.getBigUint64(o + 16, true))
    const filesz = Number(v.getBigUint64(o + 32, true))
    if (v.getUint32(o, true) === 1 && addr >= vaddr && addr + 4 <= vaddr + filesz) {
      const out = bytes.slice()
      new DataView(out.buffer).setUint32(Number(v.getBigUint64(o + 8, true)) + (addr - vaddr), value, true)
      return out
    }
  }
  throw new Error(`${name} is not in an initialised segment`)
}
