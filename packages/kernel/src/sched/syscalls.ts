// The scheduler's system calls (kernel/sched/, kernel/rseq.c,
// kernel/sys.c's CPU-time calls).

import type { SyscallDef } from '../syscalls.js'
import { sysGetrusage, sysTimes } from './cputime.js'
import { sysRseq } from './rseq.js'
import { sysSchedGetaffinity } from './sched-affinity.js'

export function registerSchedSyscalls(def: SyscallDef): void {
  // do_sched_yield: the caller goes to the back of the run queue at its return to user mode (schedule()).
  def(24, 'sched_yield', ({ kernel, cpu }) => {
    kernel.sched.setNeedResched(cpu)
    return 0
  })
  def(204, 'sched_getaffinity', sysSchedGetaffinity)
  def(334, 'rseq', sysRseq)
  def(98, 'getrusage', sysGetrusage)
  def(100, 'times', sysTimes)
}
