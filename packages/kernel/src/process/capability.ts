// Capabilities (kernel/capability.c, security/commoncap.c): each task's effective, permitted and
// inheritable sets. Every task starts as root with all of them; capset may drop some (a dropped one
// is checked where its call needs it: chroot's CAP_SYS_CHROOT), fork copies them, and exec gives
// root its full sets back (cap_bprm_creds_from_file: root's file capabilities are all of them). The
// bounding set is never lowered here: it is every capability.

import { EFAULT, EINVAL, EPERM, ESRCH } from '../errno.js'
import { BadAddress, copyFromUser, copyToUser, readUserU32 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext } from '../syscalls.js'

export const CAP_SETPCAP = 8
export const CAP_SYS_CHROOT = 18
/** CAP_LAST_CAP (CAP_CHECKPOINT_RESTORE): bits above it are not capabilities. */
const CAP_LAST_CAP = 40
const CAP_FULL = (1n << BigInt(CAP_LAST_CAP + 1)) - 1n

const LINUX_CAPABILITY_VERSION_1 = 0x19980330
const LINUX_CAPABILITY_VERSION_2 = 0x20071026
const LINUX_CAPABILITY_VERSION_3 = 0x20080522

export interface Capabilities {
  effective: bigint
  permitted: bigint
  inheritable: bigint
}

/** init's: everything effective and permitted, nothing inheritable. */
export function rootCapabilities(): Capabilities {
  return { effective: CAP_FULL, permitted: CAP_FULL, inheritable: 0n }
}

/** capable(): the capability is in the task's effective set. */
export function capable(task: Task, cap: number): boolean {
  return (task.caps.effective & (1n << BigInt(cap))) !== 0n
}

/** cap_bprm_creds_from_file for root: permitted and effective become the bounding set (all). */
export function capBprmCreds(task: Task): void {
  task.caps = { ...task.caps, effective: CAP_FULL, permitted: CAP_FULL }
}

/**
 * cap_validate_magic: the header's version, and how many 32-bit words each set has in the data
 * (1 for version 1, 2 after). An unknown version is EINVAL, the preferred one written back.
 */
function validateMagic(ctx: SyscallContext, header: number): number {
  const version = readUserU32(ctx.task.mm, header)
  if (version === LINUX_CAPABILITY_VERSION_1) return 1
  if (version === LINUX_CAPABILITY_VERSION_2 || version === LINUX_CAPABILITY_VERSION_3) return 2
  copyToUser(ctx.task.mm, header, u32s([LINUX_CAPABILITY_VERSION_3]))
  return -EINVAL
}

function u32s(words: number[]): Uint8Array {
  const b = new Uint8Array(words.length * 4)
  const v = new DataView(b.buffer)
  for (const [i, w] of words.entries()) v.setUint32(i * 4, w >>> 0, true)
  return b
}

const word = (set: bigint, i: number) => Number((set >> BigInt(32 * i)) & 0xffffffffn)

/** capget(header, data): the sets of the task header->pid names (0: the caller). */
export function sysCapget(ctx: SyscallContext, header: number, data: number): number {
  const words = validateMagic(ctx, header)
  if (words < 0) return data === 0 ? 0 : words
  const pid = readUserU32(ctx.task.mm, header + 4) | 0
  if (pid < 0) return -EINVAL
  if (data === 0) return 0
  // cap_get_target_pid: any task the pid names, a zombie too.
  const target = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!target) return -ESRCH
  const { effective, permitted, inheritable } = target.caps
  const out: number[] = []
  for (let i = 0; i < words; i++) out.push(word(effective, i), word(permitted, i), word(inheritable, i))
  copyToUser(ctx.task.mm, data, u32s(out))
  return 0
}

/** capset(header, data): the caller's own sets only (pid 0 or its own), within cap_capset's rules. */
export function sysCapset(ctx: SyscallContext, header: number, data: number): number {
  const words = validateMagic(ctx, header)
  if (words < 0) return words
  const pid = readUserU32(ctx.task.mm, header + 4) | 0
  if (pid !== 0 && pid !== ctx.task.tgid && pid !== ctx.task.pid) return -EPERM
  let raw: Uint8Array
  try {
    raw = copyFromUser(ctx.task.mm, data, words * 12)
  } catch (e) {
    if (e instanceof BadAddress) return -EFAULT
    throw e
  }
  const v = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
  const set = (field: number) => {
    let s = 0n
    for (let i = 0; i < words; i++) s |= BigInt(v.getUint32(i * 12 + field * 4, true)) << BigInt(32 * i)
    return s & CAP_FULL
  }
  const next: Capabilities = { effective: set(0), permitted: set(1), inheritable: set(2) }
  const old = ctx.task.caps
  const within = (a: bigint, b: bigint) => (a & ~b) === 0n
  // Inheritable: from what was inheritable or permitted (anything in the bounding set with CAP_SETPCAP).
  if (
    !within(next.inheritable, old.inheritable | (capable(ctx.task, CAP_SETPCAP) ? CAP_FULL : old.permitted))
  )
    return -EPERM
  // Permitted only shrinks; effective stays within permitted.
  if (!within(next.permitted, old.permitted) || !within(next.effective, next.permitted)) return -EPERM
  ctx.task.caps = next
  return 0
}
