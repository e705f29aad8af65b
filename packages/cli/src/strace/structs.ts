// Structs strace prints in its abbreviated (non -v) form, x86-64 layouts:
// stat, timespec, timeval, rusage, utsname, iovec arrays, flock.

import { LOCK_TYPES, WHENCE } from './file-flags.js'
import { readStruct, type StraceMemory } from './memory.js'
import { hex, octalMode, pointer } from './numbers.js'
import { formatBuffer, formatCharArray, MAX_STRLEN } from './quote.js'
import { lookup, xval } from './xlat.js'

/** struct timespec: {tv_sec=1, tv_nsec=5}. */
export function timespecAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 16)
  return s ? `{tv_sec=${s.i64(0)}, tv_nsec=${s.i64(8)}}` : hex(addr)
}

function timeval(sec: bigint, usec: bigint): string {
  return `{tv_sec=${sec}, tv_usec=${usec}}`
}

/** struct rusage, abbreviated to the two times. */
export function rusageAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 144)
  if (!s) return hex(addr)
  return `{ru_utime=${timeval(s.i64(0), s.i64(8))}, ru_stime=${timeval(s.i64(16), s.i64(24))}, ...}`
}

const S_IFMT = 0o170000
const FILE_TYPES: readonly (readonly [number, string])[] = [
  [0o100000, 'S_IFREG'],
  [0o140000, 'S_IFSOCK'],
  [0o10000, 'S_IFIFO'],
  [0o120000, 'S_IFLNK'],
  [0o40000, 'S_IFDIR'],
  [0o60000, 'S_IFBLK'],
  [0o20000, 'S_IFCHR'],
]

/** A st_mode: S_IFREG|S_ISUID|0755 (print_symbolic_mode_t). */
export function fileModeText(mode: number): string {
  const type = mode & S_IFMT
  const name = type ? lookup(FILE_TYPES, type) : ''
  if (name === undefined) return octalMode(mode)
  return (
    (name ? `${name}|` : '') +
    (mode & 0o4000 ? 'S_ISUID|' : '') +
    (mode & 0o2000 ? 'S_ISGID|' : '') +
    (mode & 0o1000 ? 'S_ISVTX|' : '') +
    octalMode(mode & 0o777)
  )
}

/** glibc's major/minor split of a dev_t, shown as makedev(0x88, 0). */
function makedev(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn)
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn)
  return `makedev(${hex(major)}, ${hex(minor)})`
}

/** struct stat: {st_mode=S_IFREG|0644, st_size=1234, ...}; devices show st_rdev instead. */
export function statAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 144)
  if (!s) return hex(addr)
  const mode = s.u32(24)
  const type = mode & S_IFMT
  const second =
    type === 0o20000 || type === 0o60000 ? `st_rdev=${makedev(s.u64(40))}` : `st_size=${s.u64(48)}`
  return `{st_mode=${fileModeText(mode)}, ${second}, ...}`
}

/** struct utsname: {sysname="Linux", nodename="vm", ...}. */
export function utsnameAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 65 * 6)
  if (!s) return hex(addr)
  const field = (i: number) => formatCharArray(s.bytes.subarray(i * 65, (i + 1) * 65))
  return `{sysname=${field(0)}, nodename=${field(1)}, ...}`
}

/**
 * An iovec array (tprint_iov_upto). With data, each iov_base is shown as a
 * buffer of its iov_len bytes, taken from dataSize in order (readv passes its
 * return value; -1 is unlimited); without, as an address.
 */
export function iovecArrayAt(
  mem: StraceMemory,
  addr: number,
  count: number,
  dataSize: number | null,
): string {
  if (addr === 0) return 'NULL'
  if (count === 0) return '[]'
  let left = dataSize === null || dataSize < 0 ? Number.POSITIVE_INFINITY : dataSize
  const items: string[] = []
  for (let i = 0; i < count; i++) {
    if (i === MAX_STRLEN) {
      items.push('...')
      break
    }
    const s = readStruct(mem, addr + i * 16, 16)
    if (!s) {
      if (i === 0) return hex(addr)
      items.push(`... /* ${hex(addr + i * 16)} */`)
      break
    }
    const base = Number(s.u64(0))
    const len = s.u64(8)
    let shown: string
    if (dataSize === null) shown = pointer(base)
    else {
      const take = Math.min(Number(len), left)
      left -= take
      shown = formatBuffer(mem, base, take)
    }
    items.push(`{iov_base=${shown}, iov_len=${len}}`)
  }
  return `[${items.join(', ')}]`
}

/** struct flock: {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=0} (+ l_pid for F_GETLK). */
export function flockAt(mem: StraceMemory, addr: number, withPid: boolean): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 32)
  if (!s) return hex(addr)
  let text = `{l_type=${xval(LOCK_TYPES, s.i16(0), 'F_???')}, l_whence=${xval(WHENCE, s.i16(2), 'SEEK_???')}, l_start=${s.i64(8)}, l_len=${s.i64(16)}`
  if (withPid) text += `, l_pid=${s.i32(24)}`
  return `${text}}`
}
