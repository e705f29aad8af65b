// 64-bit file offsets (loff_t) and sizes exactly. The syscall table hands
// its functions numbers, exact up to 2^53; an offset or a count near 2^63
// (the boundary values rw_verify_area and lseek check) needs all 64 bits.

import { PT_REGS } from '../abi.js'
import { copyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'

/** LLONG_MAX: loff_t's largest value (MAX_LFS_FILESIZE, tmpfs's s_maxbytes). */
export const LOFF_MAX = (1n << 63n) - 1n

/** A system call argument's register as a signed 64-bit value (a loff_t, an ssize_t). */
export function loffArg(ctx: SyscallContext, r: 'di' | 'si' | 'dx' | 'r10' | 'r8' | 'r9'): bigint {
  const at = ctx.frame.phys + PT_REGS[r]
  const b = ctx.frame.bytes
  let v = 0n
  for (let k = 7; k >= 0; k--) v = (v << 8n) | BigInt(b[at + k])
  return BigInt.asIntN(64, v)
}

/** A loff_t in user memory (sendfile's offset): EFAULT as BadAddress. */
export function readUserLoff(ctx: SyscallContext, addr: number): bigint {
  const b = copyFromUser(ctx.task.mm, addr, 8)
  return new DataView(b.buffer, b.byteOffset, 8).getBigInt64(0, true)
}

/**
 * rw_verify_area: a count that is negative as an ssize_t, a negative
 * position, or a range whose end passes LLONG_MAX is EINVAL.
 */
export function rwVerifyArea(pos: bigint, count: bigint): number {
  if (count < 0n) return -22
  if (pos < 0n || pos + count > LOFF_MAX) return -22
  return 0
}
