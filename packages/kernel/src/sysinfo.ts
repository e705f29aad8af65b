// sysinfo(info) (kernel/sys.c): uptime, memory and task counts. glibc's
// sysconf(_SC_PHYS_PAGES / _SC_AVPHYS_PAGES) reads it (qsort sizes its
// buffer by it). No swap, no high memory; load averages are not kept (0).

import { copyToUser } from './mm/user-memory.js'
import type { SyscallContext } from './syscalls.js'

const PAGE_SIZE = 4096

export function sysSysinfo({ kernel, task }: SyscallContext, info: number): number {
  const m = kernel.machine
  const b = new Uint8Array(112)
  const v = new DataView(b.buffer)
  const u64 = (o: number, x: number) => v.setBigUint64(o, BigInt(x), true)
  // Seconds since boot on the virtual clock (clock_gettime's), rounded up like get_monotonic_boottime.
  u64(0, Math.ceil(m.cycles(0) / 1e9))
  // In bytes (mem_unit 1), as do_sysinfo reports when the totals fit an unsigned long - always on 64-bit.
  u64(32, m.memory.size) // totalram
  u64(40, m.memory.size - m.frames.used * PAGE_SIZE) // freeram
  v.setUint16(80, Math.min(kernel.tasks.size, 0xffff), true) // procs: threads
  v.setUint32(104, 1, true) // mem_unit
  copyToUser(task.mm, info, b)
  return 0
}
