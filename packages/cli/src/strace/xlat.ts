// strace's xlat printing: a value by name (printxval) or a set of flags
// (printflags), in the order of strace's own tables, with whatever is left
// over in hex: "O_RDWR|0x40000000", "0x7 /* SEEK_??? */".

import { hex } from './numbers.js'

/** [value, name] pairs in strace's table order. */
export type Xlat = readonly (readonly [number | bigint, string])[]

function big(v: number | bigint): bigint {
  return typeof v === 'bigint' ? v : BigInt(v)
}

/** The name of value, or undefined. */
export function lookup(table: Xlat, value: number | bigint): string | undefined {
  const v = big(value)
  for (const [k, name] of table) if (big(k) === v) return name
  return undefined
}

/** printxval: the name, else hex with a comment naming the family ("SEEK_???"). */
export function xval(table: Xlat, value: number | bigint, unknown?: string): string {
  const name = lookup(table, value)
  if (name !== undefined) return name
  return unknown ? `${hex(big(value))} /* ${unknown} */` : hex(big(value))
}

/**
 * printflags: every table entry whose bits are all set, in table order, each
 * clearing its bits; leftovers in hex. A zero value prints the table's zero
 * entry if it has one (PROT_NONE), else 0.
 */
export function flags(table: Xlat, value: number | bigint, unknown?: string): string {
  let rest = BigInt.asUintN(64, big(value))
  if (rest === 0n) return lookup(table, 0) ?? '0'
  const names: string[] = []
  for (const [k, name] of table) {
    const bits = big(k)
    if (bits !== 0n && (rest & bits) === bits) {
      names.push(name)
      rest &= ~bits
    }
  }
  if (rest !== 0n) {
    if (names.length === 0 && unknown) return `${hex(rest)} /* ${unknown} */`
    names.push(hex(rest))
  }
  return names.join('|')
}
