// How strace prints a register: the kernel gives a signed 64-bit value as a
// JS number, and strace shows it as the C type of the argument it is (an int
// fd drops the upper half, a size_t is unsigned, a pointer is hex).

/** The register as C's unsigned long (a negative number wraps). */
export function u64(value: number | bigint): bigint {
  return BigInt.asUintN(64, typeof value === 'bigint' ? value : BigInt(Math.trunc(value)))
}

/** The low half as C's int: -1 in a zero-extended 0xffffffff is still -1. */
export function int32(value: number): number {
  return Number(BigInt.asIntN(32, BigInt(Math.trunc(value))))
}

/** The low half as C's unsigned int. */
export function uint32(value: number): number {
  return Number(BigInt.asUintN(32, BigInt(Math.trunc(value))))
}

/** printf's %#lx: 0 stays 0, anything else is 0x-prefixed lower-case hex. */
export function hex(value: number | bigint): string {
  const v = u64(value)
  return v === 0n ? '0' : `0x${v.toString(16)}`
}

/** strace's printaddr: NULL for 0, hex otherwise. */
export function pointer(value: number | bigint): string {
  return u64(value) === 0n ? 'NULL' : hex(value)
}

/** An unsigned long (size_t) in decimal. */
export function unsignedDecimal(value: number | bigint): string {
  return u64(value).toString()
}

/** A signed long in decimal, exact even beyond 2^53 where JS numbers round. */
export function signedDecimal(value: number): string {
  return BigInt.asIntN(64, BigInt(Math.trunc(value))).toString()
}

/** printf's %#03o, strace's way of showing a file mode: 0644, 022, 000. */
export function octalMode(value: number): string {
  const text = value === 0 ? '0' : `0${value.toString(8)}`
  return text.padStart(3, '0')
}
