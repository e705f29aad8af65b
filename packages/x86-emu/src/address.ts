// Linear addresses as JS numbers.
//
// A canonical x86-64 address is a 48-bit value sign-extended to 64 bits, so
// its signed 64-bit interpretation lies in [-2^47, 2^47) and fits a double
// exactly. Everywhere in probekit a "linear number" is that signed value:
// user space is positive, kernel space negative (0xffffffff81000000 is
// -0x7f000000). Arithmetic wraps the way the CPU's does as long as results
// stay canonical, and no BigInt is needed on hot paths.

const TWO_32 = 0x1_0000_0000
const TWO_64 = 2n ** 64n

/** Is this linear number a canonical address? */
export function isCanonical(addr: number): boolean {
  return Number.isInteger(addr) && addr >= -0x8000_0000_0000 && addr < 0x8000_0000_0000
}

/** Linear number from an unsigned or signed 64-bit bigint (e.g. 0xffffffff81000000n). */
export function linearFromBigInt(v: bigint): number {
  return Number(BigInt.asIntN(64, v))
}

/** The unsigned 64-bit value of a linear number. */
export function linearToBigInt(addr: number): bigint {
  return BigInt.asUintN(64, BigInt(addr))
}

/** Linear number from the two 32-bit halves of a 64-bit register (hi taken as signed). */
export function linearFromHalves(lo: number, hi: number): number {
  return (hi | 0) * TWO_32 + (lo >>> 0)
}

/** Low 32 bits of a linear number, as a signed int32. */
export function linearLo(addr: number): number {
  return addr | 0
}

/** High 32 bits of a linear number, as a signed int32. */
export function linearHi(addr: number): number {
  return Math.floor(addr / TWO_32) | 0
}

/** '0xffffffff81000000'-style hex, 16 digits (the kernel's %px / kallsyms spelling). */
export function formatLinear(addr: number, pad = 16): string {
  const v = addr < 0 ? BigInt(addr) + TWO_64 : BigInt(addr)
  return `0x${v.toString(16).padStart(pad, '0')}`
}

/** Parse '0xffffffff81000000', '18446744071578845184' or a number into a linear number. */
export function parseLinear(text: string | number | bigint): number {
  if (typeof text === 'number') return text
  if (typeof text === 'bigint') return linearFromBigInt(text)
  return linearFromBigInt(BigInt(text.trim()))
}
