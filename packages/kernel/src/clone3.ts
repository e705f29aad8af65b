// clone3(struct clone_args *, size) (kernel/fork.c): clone with its
// arguments in a versioned, extensible struct, and the stack given as base
// and size. glibc 2.34+ creates its threads with it (and falls back to clone
// only on ENOSYS). Here it reaches the same copy as clone (forkTask).

import { E2BIG, EINVAL } from './errno.js'
import { PAGE } from './mm.js'
import { CLONE_SIGHAND, CLONE_THREAD, CLONE_VM, forkTask } from './process.js'
import type { SyscallContext } from './syscalls.js'
import { copyFromUser } from './user-memory.js'

/** CLONE_ARGS_SIZE_VER0 (up to tls) and the size this kernel knows (VER2: + set_tid, set_tid_size, cgroup). */
const CLONE_ARGS_SIZE_VER0 = 64
const CLONE_ARGS_SIZE_KNOWN = 88
const CSIGNAL = 0xffn
const CLONE_NEWTIME = 0x80n
const CLONE_FS = 0x200n
const CLONE_PIDFD = 0x1000n
const CLONE_PARENT = 0x8000n
const CLONE_NEWNS = 0x20000n
const CLONE_DETACHED = 0x400000n
const CLONE_CLEAR_SIGHAND = 0x1_0000_0000n
const CLONE_INTO_CGROUP = 0x2_0000_0000n
const CLONE_LEGACY_FLAGS = 0xffff_ffffn

export function sysClone3(ctx: SyscallContext, uargs: number, size: number): number {
  if (size > PAGE) return -E2BIG
  if (size < CLONE_ARGS_SIZE_VER0) return -EINVAL
  const raw = copyFromUser(ctx.task.mm, uargs, size)
  // A newer struct is fine as long as the fields this kernel does not know are zero.
  if (raw.subarray(CLONE_ARGS_SIZE_KNOWN).some((b) => b !== 0)) return -E2BIG
  const a = new Uint8Array(CLONE_ARGS_SIZE_KNOWN)
  a.set(raw.subarray(0, CLONE_ARGS_SIZE_KNOWN))
  const v = new DataView(a.buffer)
  const u64 = (i: number) => v.getBigUint64(8 * i, true)
  const [flags, , childTid, parentTid, exitSignal, stack, stackSize, tls, setTid, setTidSize] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
  ].map(u64)
  // clone3_args_valid
  if ((flags & ~(CLONE_LEGACY_FLAGS | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP)) !== 0n) return -EINVAL
  if ((flags & CLONE_CLEAR_SIGHAND) !== 0n && (flags & BigInt(CLONE_SIGHAND)) !== 0n) return -EINVAL
  if ((exitSignal & ~CSIGNAL) !== 0n) return -EINVAL
  if ((flags & (CLONE_DETACHED | (CSIGNAL & ~CLONE_NEWTIME))) !== 0n) return -EINVAL
  if ((flags & (BigInt(CLONE_THREAD) | CLONE_PARENT)) !== 0n && exitSignal !== 0n) return -EINVAL
  if (setTidSize > 32n || (setTid === 0n) !== (setTidSize === 0n)) return -EINVAL
  if ((stack === 0n) !== (stackSize === 0n)) return -EINVAL
  // kernel_clone's checks
  if ((flags & (CLONE_NEWNS | CLONE_FS)) === (CLONE_NEWNS | CLONE_FS)) return -EINVAL
  if ((flags & BigInt(CLONE_THREAD)) !== 0n && (flags & BigInt(CLONE_SIGHAND)) === 0n) return -EINVAL
  if ((flags & BigInt(CLONE_SIGHAND)) !== 0n && (flags & BigInt(CLONE_VM)) === 0n) return -EINVAL
  // Not provided here: choosing the pid (set_tid), pidfds, cgroups, and the new namespaces.
  if (setTidSize !== 0n || (flags & (CLONE_PIDFD | CLONE_INTO_CGROUP | 0x7e02_0000n)) !== 0n) return -EINVAL
  const legacy = Number(flags & CLONE_LEGACY_FLAGS) | Number(exitSignal)
  // The stack grows down from base + size.
  const sp = stack === 0n ? 0 : Number(stack + stackSize)
  const pid = forkTask(ctx, legacy, sp, Number(parentTid), Number(childTid), Number(tls))
  if (pid > 0 && (flags & CLONE_CLEAR_SIGHAND) !== 0n) ctx.kernel.tasks.get(pid)?.sighand.resetOnExec()
  return pid
}
