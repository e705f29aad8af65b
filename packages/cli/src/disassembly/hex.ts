// Hex spellings used in listings, matching what objdump and capstone print.

const TWO_64 = 2n ** 64n

/** A linear number as an unsigned 64-bit hex address without 0x, zero-padded to `pad` digits. */
export function addressDigits(linear: number, pad = 0): string {
  const unsigned = linear < 0 ? BigInt(linear) + TWO_64 : BigInt(linear)
  return unsigned.toString(16).padStart(pad, '0')
}

/** '0xffffffff81000010' for a branch target or absolute address. */
export function formatAddress(linear: number): string {
  return `0x${addressDigits(linear)}`
}

/** A signed number the way capstone prints immediates and displacements: decimal up to 9, hex beyond. */
export function formatSigned(value: number | bigint): string {
  const big = BigInt(value)
  const magnitude = big < 0n ? -big : big
  const digits = magnitude > 9n ? `0x${magnitude.toString(16)}` : magnitude.toString()
  return big < 0n ? `-${digits}` : digits
}

/** '48 89 e5' */
export function formatBytes(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ')
}
