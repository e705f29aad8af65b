// Reading the traced program's memory the way strace's umoven/umovestr do:
// a whole object or nothing (the caller then prints the address instead).

/** The guest's user memory as the formatter sees it. */
export interface StraceMemory {
  /** Bytes of user memory, or null where unmapped. */
  read(addr: number, len: number): Uint8Array | null
}

const PAGE = 4096

/** len bytes at addr, or null if any of them is unreadable (umoven). */
export function readBytes(mem: StraceMemory, addr: number, len: number): Uint8Array | null {
  if (len === 0) return new Uint8Array(0)
  if (addr <= 0) return null
  const bytes = mem.read(addr, len)
  return bytes && bytes.length >= len ? bytes.subarray(0, len) : null
}

/**
 * A NUL-terminated string of at most max bytes (umovestr): read page by page
 * so a short string at the end of a mapping still reads. terminated says
 * whether the NUL was found within max bytes; the NUL is not included.
 */
export function readCString(
  mem: StraceMemory,
  addr: number,
  max: number,
): { bytes: Uint8Array; terminated: boolean } | null {
  if (addr <= 0) return null
  const out: number[] = []
  let at = addr
  while (out.length < max) {
    const chunk = Math.min(PAGE - (at % PAGE), max - out.length)
    const bytes = mem.read(at, chunk)
    if (!bytes || bytes.length < chunk) return null
    for (let i = 0; i < chunk; i++) {
      if (bytes[i] === 0) return { bytes: Uint8Array.from(out), terminated: true }
      out.push(bytes[i])
    }
    at += chunk
  }
  return { bytes: Uint8Array.from(out), terminated: false }
}

/** Little-endian fields of a struct already read. */
export class StructView {
  private readonly view: DataView
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
  u8(offset: number): number {
    return this.view.getUint8(offset)
  }
  u16(offset: number): number {
    return this.view.getUint16(offset, true)
  }
  i16(offset: number): number {
    return this.view.getInt16(offset, true)
  }
  u32(offset: number): number {
    return this.view.getUint32(offset, true)
  }
  i32(offset: number): number {
    return this.view.getInt32(offset, true)
  }
  u64(offset: number): bigint {
    return this.view.getBigUint64(offset, true)
  }
  i64(offset: number): bigint {
    return this.view.getBigInt64(offset, true)
  }
}

/** A struct of size bytes at addr, or null where strace would print the address. */
export function readStruct(mem: StraceMemory, addr: number, size: number): StructView | null {
  const bytes = readBytes(mem, addr, size)
  return bytes ? new StructView(bytes) : null
}
