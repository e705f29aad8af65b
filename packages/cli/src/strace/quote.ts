// strace's string quoting (util.c string_quote, printstr_ex, printpathn):
// printable ASCII as is, \" \\ \f \n \r \t \v, other bytes as the shortest
// octal escape (three digits when a digit 0-7 follows, so "\0001" stays
// unambiguous), at most 32 bytes with "..." after the closing quote.

import { readBytes, readCString, type StraceMemory } from './memory.js'
import { pointer } from './numbers.js'

/** strace's default -s: how many bytes of a string it shows. */
export const MAX_STRLEN = 32
const PATH_MAX = 4096

const ESCAPES: Record<number, string> = {
  34: '\\"',
  92: '\\\\',
  12: '\\f',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  11: '\\v',
}

/** The quoted text of the first size bytes; hex forces \xNN for every byte (getrandom). */
export function quoteBytes(bytes: Uint8Array, size: number, hex = false): string {
  let out = '"'
  for (let i = 0; i < size; i++) {
    const c = bytes[i]
    if (hex) out += `\\x${c.toString(16).padStart(2, '0')}`
    else if (ESCAPES[c] !== undefined) out += ESCAPES[c]
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c)
    else {
      const next = i + 1 < size ? bytes[i + 1] : -1
      const digits = next >= 0x30 && next <= 0x37 ? 3 : 1
      out += `\\${c.toString(8).padStart(digits, '0')}`
    }
  }
  return `${out}"`
}

/** A buffer of len bytes (printstrn): read/write data, shown up to 32 bytes. */
export function formatBuffer(mem: StraceMemory, addr: number, len: number, hex = false): string {
  if (addr === 0) return 'NULL'
  const size = Math.min(len, MAX_STRLEN)
  const bytes = readBytes(mem, addr, size)
  if (!bytes) return pointer(addr)
  return quoteBytes(bytes, size, hex) + (len > MAX_STRLEN ? '...' : '')
}

/** A NUL-terminated string cut at 32 bytes (printstr): argv entries. */
export function formatCString(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  // One byte more than shown, to know whether the string goes on.
  const got = readCString(mem, addr, MAX_STRLEN + 1)
  if (!got) return pointer(addr)
  const size = Math.min(got.bytes.length, MAX_STRLEN)
  return quoteBytes(got.bytes, size) + (got.bytes.length > MAX_STRLEN ? '...' : '')
}

/** A path (printpath): shown whole up to PATH_MAX, "..." only if no NUL by then. */
export function formatPath(mem: StraceMemory, addr: number, max = PATH_MAX): string {
  if (addr === 0) return 'NULL'
  const got = readCString(mem, addr, max)
  if (!got) return pointer(addr)
  if (got.terminated) return quoteBytes(got.bytes, got.bytes.length)
  // Unterminated within max: strace shows max - 1 bytes and "...".
  return `${quoteBytes(got.bytes, max - 1)}...`
}

/** A NUL-terminated char array inside a struct (utsname fields): no 32-byte cut. */
export function formatCharArray(bytes: Uint8Array): string {
  const end = bytes.indexOf(0)
  if (end >= 0) return quoteBytes(bytes, end)
  return `${quoteBytes(bytes, bytes.length - 1)}...`
}
