// /proc/PID/status (fs/proc/array.c proc_pid_status): "Key:\tvalue" lines
// in Linux's order. Every task runs as root with every capability and no
// supplementary groups, in one PID namespace, on one memory node; all CPUs
// are allowed. Lines for what is not kept here (VmPeak, VmHWM, context
// switch counts) are left out rather than made up.

import type { Kernel } from '../../kernel.js'
import { RLIMIT_SIGPENDING } from '../../process/rlimits.js'
import type { Task } from '../../sched/task.js'
import { taskMem } from './task-mem.js'
import { pendingSet, signalSets, taskState, threadGroup } from './task-state.js'

/** CAP_LAST_CAP 40: the full capability set. */
const CAP_FULL = '000001ffffffffff'
/** NR_OPEN_DEFAULT: the descriptor table's first size; it doubles as it grows. */
const NR_OPEN_DEFAULT = 64

const sigset = (s: bigint) => s.toString(16).padStart(16, '0')

/** fdt->max_fds for a table whose highest slot in use is n - 1. */
function fdSize(n: number): number {
  let size = NR_OPEN_DEFAULT
  while (size < n) size *= 2
  return size
}

export function showStatus(kernel: Kernel, t: Task): string {
  const cpus = kernel.machine.cpus.length
  const ppid = t.parent ? t.parent.tgid : 0
  const group = threadGroup(kernel, t)
  const { ignored, caught } = signalSets(t)
  const queued = group.reduce((n, x) => n + x.pending.size, 0)
  const sigLimit = t.rlimits[RLIMIT_SIGPENDING]?.cur ?? 0n
  const alive = t.state !== 'zombie'
  const lines = [
    `Name:\t${t.comm}`,
    `Umask:\t${t.umask.toString(8).padStart(4, '0')}`,
    `State:\t${taskState(t)}`,
    `Tgid:\t${t.tgid}`,
    'Ngid:\t0',
    `Pid:\t${t.pid}`,
    `PPid:\t${ppid}`,
    'TracerPid:\t0',
    'Uid:\t0\t0\t0\t0',
    'Gid:\t0\t0\t0\t0',
    `FDSize:\t${alive ? fdSize(t.files.fds.length) : 0}`,
    // The trailing space is Linux's ("shouldn't have been added in the first place").
    'Groups:\t ',
    `NStgid:\t${t.tgid}`,
    `NSpid:\t${t.pid}`,
    `NSpgid:\t${t.pgid}`,
    `NSsid:\t${t.sid}`,
    'Kthread:\t0',
  ]
  let text = `${lines.join('\n')}\n`
  if (alive) text += taskMem(t.mm)
  text += `${[
    'CoreDumping:\t0',
    `Threads:\t${group.filter((x) => x.state !== 'zombie').length || 1}`,
    `SigQ:\t${queued}/${sigLimit}`,
    `SigPnd:\t${sigset(pendingSet(t))}`,
    'ShdPnd:\t0000000000000000',
    `SigBlk:\t${sigset(t.blocked)}`,
    `SigIgn:\t${sigset(ignored)}`,
    `SigCgt:\t${sigset(caught)}`,
    'CapInh:\t0000000000000000',
    `CapPrm:\t${CAP_FULL}`,
    `CapEff:\t${CAP_FULL}`,
    `CapBnd:\t${CAP_FULL}`,
    'CapAmb:\t0000000000000000',
    'NoNewPrivs:\t0',
    'Seccomp:\t0',
    'Seccomp_filters:\t0',
    `Cpus_allowed:\t${((1n << BigInt(cpus)) - 1n).toString(16)}`,
    `Cpus_allowed_list:\t${cpus > 1 ? `0-${cpus - 1}` : '0'}`,
    'Mems_allowed:\t1',
    'Mems_allowed_list:\t0',
  ].join('\n')}\n`
  return text
}
