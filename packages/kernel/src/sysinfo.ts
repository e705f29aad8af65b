// sysinfo(2): uptime, memory and process counts, from the emulated machine.

import type { SyscallContext } from './syscalls.js'
import { copyToUser } from './user-memory.js'

const PAGE_SIZE = 4096
const SI_LOAD_SHIFT = 16

export function sysSysinfo(ctx: SyscallContext, info: number): number {
  const { kernel } = ctx
  const machine = kernel.machine
  // struct sysinfo (x86-64): 112 bytes.
  const b = new Uint8Array(112)
  const v = new DataView(b.buffer)
  const u64 = (off: number, x: number) => v.setBigUint64(off, BigInt(Math.max(0, Math.floor(x))), true)
  u64(0, machine.cycles(0) / 1e9) // uptime, seconds of virtual clock
  // loads[3] at 8..31: the number of runnable tasks, as a fixed-point instantaneous load.
  let running = 0
  let procs = 0
  for (const t of kernel.tasks.values()) {
    if (t.state === 'zombie') continue
    procs++
    if (t.state === 'running' || t.state === 'runnable') running++
  }
  for (let i = 0; i < 3; i++) u64(8 + 8 * i, running << SI_LOAD_SHIFT)
  const total = machine.memory.size
  u64(32, total) // totalram
  u64(40, total - machine.frames.used * PAGE_SIZE) // freeram
  // sharedram, bufferram, totalswap, freeswap: 0
  v.setUint16(80, procs, true)
  // totalhigh, freehigh: 0
  v.setUint32(104, 1, true) // mem_unit
  copyToUser(ctx.task.mm, info, b)
  return 0
}
