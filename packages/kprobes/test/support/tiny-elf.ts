// A minimal static ELF64 executable around raw machine code (text at 0x400000,
// one RWX-free R+X segment), for kernel tests that need exact instruction streams.

export const TINY_BASE = 0x400000

export function tinyElf(code: ArrayLike<number>): Uint8Array {
  const hdr = 64 + 56
  const b = new Uint8Array(hdr + code.length)
  const v = new DataView(b.buffer)
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1])
  v.setUint16(16, 2, true) // ET_EXEC
  v.setUint16(18, 62, true) // x86-64
  v.setUint32(20, 1, true)
  v.setBigUint64(24, BigInt(TINY_BASE + hdr), true) // entry
  v.setBigUint64(32, 64n, true) // phoff
  v.setUint16(52, 64, true)
  v.setUint16(54, 56, true)
  v.setUint16(56, 1, true)
  v.setUint32(64, 1, true) // PT_LOAD
  v.setUint32(68, 5, true) // R+X
  v.setBigUint64(72, 0n, true)
  v.setBigUint64(80, BigInt(TINY_BASE), true)
  v.setBigUint64(88, BigInt(TINY_BASE), true)
  v.setBigUint64(96, BigInt(b.length), true)
  v.setBigUint64(104, BigInt(b.length), true)
  v.setBigUint64(112, 4096n, true)
  b.set(code, hdr)
  return b
}

/** mov eax, nr ; syscall */
export const syscall = (nr: number) => [0xb8, nr & 0xff, (nr >> 8) & 0xff, 0, 0, 0x0f, 0x05]
/** mov edi, v */
export const movEdi = (v: number) => [0xbf, v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff]
