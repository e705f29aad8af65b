// select_bad_process's host half (mm/oom_kill.c): the guest's OOM killer
// asks which process to kill. oom_badness is a process's resident pages
// plus its page tables (there is no swap); the largest goes, ties to the
// lowest pid. Linux spares init; here pid 1 is the program the user runs,
// not a system init, so it may be chosen (its death ends the run, as it
// would end a container). While an earlier victim is still exiting, no one
// else is chosen: its memory is about to come back.

import {
  HC_OOM_SELECT,
  OOM_ABORT,
  OOM_ANON_RSS,
  OOM_CHOSEN,
  OOM_CHOSEN_POINTS,
  OOM_FILE_RSS,
  OOM_PGTABLES,
  OOM_TOTAL_VM,
  OOM_TOTALPAGES,
} from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import type { Kernel } from '../kernel.js'
import type { Task } from '../sched/task.js'

export function registerOomKill(kernel: Kernel): void {
  kernel.machine.registerHypercall(HC_OOM_SELECT, (c) => {
    const oc = arg(c, 0)
    const put = (off: number, v: number) => kernel.writeKernel64(oc + off, v)
    put(OOM_TOTALPAGES, kernel.machine.memory.frameCount)
    const victim = selectBadProcess(kernel)
    if (victim === 'abort') {
      put(OOM_CHOSEN, OOM_ABORT)
      return ret(c, 0)
    }
    put(OOM_CHOSEN, victim ? victim.task.guestTask : 0)
    if (victim) {
      victim.task.oomVictim = true
      const u = victim.task.mm.usage()
      put(OOM_CHOSEN_POINTS, victim.points)
      put(OOM_TOTAL_VM, u.totalVm * 4)
      put(OOM_ANON_RSS, u.anonRss * 4)
      put(OOM_FILE_RSS, u.fileRss * 4)
      put(OOM_PGTABLES, u.pgtables * 4)
    }
    ret(c, 0)
  })
}

function selectBadProcess(kernel: Kernel): { task: Task; points: number } | null | 'abort' {
  let chosen: { task: Task; points: number } | null = null
  for (const t of kernel.tasks.values()) {
    if (t.state === 'zombie') continue
    // An earlier victim's thread still alive: wait for its memory (oom_evaluate_task's abort).
    if (kernel.tasks.get(t.tgid)?.oomVictim || t.oomVictim) return 'abort'
    if (!t.isThreadGroupLeader) continue
    const u = t.mm.usage()
    const points = u.anonRss + u.fileRss + u.pgtables
    if (!chosen || points > chosen.points || (points === chosen.points && t.pid < chosen.task.pid))
      chosen = { task: t, points }
  }
  return chosen
}
