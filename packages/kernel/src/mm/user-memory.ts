// Host access to a task's user memory, with the kernel's rules: addresses
// must be below TASK_SIZE, and a page that is not there yet is faulted in
// as the task itself would (demand paging, copy-on-write); an address no
// VMA covers is -EFAULT.

import { TASK_SIZE } from '../abi.js'
import { utf8Decode } from '../utf8.js'
import { type Mm, PAGE, pageDown } from './mm.js'

export class BadAddress extends Error {
  constructor(readonly address: number) {
    super(`bad user address 0x${address.toString(16)}`)
  }
}

function frameFor(mm: Mm, addr: number, write: boolean): number {
  if (!(addr >= 0 && addr < TASK_SIZE)) throw new BadAddress(addr)
  const page = pageDown(addr)
  let m = mm.space.lookup(page)
  if (!m || (write && !m.flags.writable)) {
    if (!mm.handleFault(addr, write, false)) throw new BadAddress(addr)
    m = mm.space.lookup(page)!
  }
  return m.frame
}

/**
 * access_ok: [addr, addr + size) lies below TASK_SIZE_MAX. Only the range is checked (a call checks
 * it before its work, as Linux does); whether pages are there is the copy's matter.
 */
export function accessOk(addr: number, size: number): boolean {
  return size >= 0 && size <= TASK_SIZE && addr >= 0 && addr <= TASK_SIZE - size
}

/**
 * copy_from_user that stops at the first page it cannot read: the bytes before it (a write from a
 * buffer running into a hole writes what it could copy, generic_perform_write's short write).
 */
export function copyFromUserPartial(mm: Mm, addr: number, len: number): Uint8Array {
  let ok = 0
  while (ok < len) {
    const a = addr + ok
    const n = Math.min(PAGE - (a - pageDown(a)), len - ok)
    try {
      frameFor(mm, a, false)
    } catch (e) {
      if (e instanceof BadAddress) break
      throw e
    }
    ok += n
  }
  return copyFromUser(mm, addr, ok)
}

export function copyFromUser(mm: Mm, addr: number, len: number): Uint8Array {
  const out = new Uint8Array(len)
  for (let k = 0; k < len; ) {
    const a = addr + k
    const off = a - pageDown(a)
    const n = Math.min(PAGE - off, len - k)
    const base = frameFor(mm, a, false) * PAGE + off
    out.set(mm.memory.bytes.subarray(base, base + n), k)
    k += n
  }
  return out
}

export function copyToUser(mm: Mm, addr: number, data: Uint8Array): void {
  for (let k = 0; k < data.length; ) {
    const a = addr + k
    const off = a - pageDown(a)
    const n = Math.min(PAGE - off, data.length - k)
    mm.memory.writeBytes(frameFor(mm, a, true) * PAGE + off, data.subarray(k, k + n))
    k += n
  }
}

export function readUserU64(mm: Mm, addr: number): number {
  const b = copyFromUser(mm, addr, 8)
  const v = new DataView(b.buffer)
  return v.getInt32(4, true) * 0x1_0000_0000 + v.getUint32(0, true)
}

export function writeUserU64(mm: Mm, addr: number, value: number): void {
  const b = new Uint8Array(8)
  const v = new DataView(b.buffer)
  v.setInt32(0, value | 0, true)
  v.setInt32(4, Math.floor(value / 0x1_0000_0000) | 0, true)
  copyToUser(mm, addr, b)
}

export function writeUserU32(mm: Mm, addr: number, value: number): void {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setInt32(0, value | 0, true)
  copyToUser(mm, addr, b)
}

export function readUserU32(mm: Mm, addr: number): number {
  return new DataView(copyFromUser(mm, addr, 4).buffer).getInt32(0, true)
}

/** A NUL-terminated string of at most max bytes (null when unterminated). */
export function strncpyFromUser(mm: Mm, addr: number, max: number): string | null {
  const bytes: number[] = []
  for (let k = 0; k < max; k++) {
    const a = addr + k
    const b = mm.memory.bytes[frameFor(mm, a, false) * PAGE + (a - pageDown(a))]
    if (b === 0) return utf8Decode(Uint8Array.from(bytes))
    bytes.push(b)
  }
  return null
}
