// The process subsystem's system calls (kernel/sys.c, kernel/exit.c,
// kernel/futex/, kernel/fork.c's set_tid_address): identities, credentials,
// process groups and sessions, resource limits, prctl, waiting for
// children, futexes and robust lists. fork/clone/execve/exit themselves run
// in the guest and reach the host through their own hypercalls.

import type { SyscallDef } from '../syscalls.js'
import { sysGetgroups, sysGetresid } from './credentials.js'
import { futex } from './futex.js'
import { sysPrctl } from './prctl.js'
import { sysGetpgid, sysGetpgrp, sysGetsid, sysSetpgid, sysSetsid } from './process-groups.js'
import { sysGetrlimit, sysPrlimit64, sysSetrlimit } from './rlimits.js'
import { sysGetRobustList, sysSetRobustList } from './robust-futex.js'
import { wait4, waitid } from './wait.js'

export function registerProcessSyscalls(def: SyscallDef): void {
  def(39, 'getpid', ({ task }) => task.tgid)
  def(186, 'gettid', ({ task }) => task.pid)
  def(110, 'getppid', ({ task }) => task.parent?.tgid ?? 0)
  for (const [nr, name] of [
    [102, 'getuid'],
    [104, 'getgid'],
    [107, 'geteuid'],
    [108, 'getegid'],
  ] as const)
    def(nr, name, () => 0)
  def(115, 'getgroups', sysGetgroups)
  def(118, 'getresuid', sysGetresid)
  def(120, 'getresgid', sysGetresid)
  def(218, 'set_tid_address', ({ task }, tidptr) => {
    task.clearChildTid = tidptr
    return task.pid
  })
  def(273, 'set_robust_list', sysSetRobustList)
  def(274, 'get_robust_list', sysGetRobustList)
  def(157, 'prctl', sysPrctl)
  def(97, 'getrlimit', sysGetrlimit)
  def(160, 'setrlimit', sysSetrlimit)
  def(302, 'prlimit64', sysPrlimit64)
  def(111, 'getpgrp', sysGetpgrp)
  def(121, 'getpgid', sysGetpgid)
  def(109, 'setpgid', sysSetpgid)
  def(124, 'getsid', sysGetsid)
  def(112, 'setsid', sysSetsid)
  def(61, 'wait4', (ctx, pid, status, options) => wait4(ctx, pid | 0, status, options))
  def(247, 'waitid', (ctx, idtype, id, infop, options) => waitid(ctx, idtype, id | 0, infop, options))
  def(202, 'futex', (ctx, uaddr, op, val, val2, uaddr2, val3) =>
    futex(ctx, uaddr, op, val, val2, uaddr2, val3 | 0),
  )
}
