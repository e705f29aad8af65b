// n_tty's isig(): the console's ^C, ^\ and ^Z become SIGINT, SIGQUIT and SIGTSTP for every
// process of its foreground process group. Nothing here calls tcsetpgrp, so that group is the
// first program's (it leads its own session and group, as a program started from a shell does).

import type { Kernel } from '../kernel.js'

/** Send sig to the console's foreground process group; the number of processes it reached. */
export function ttyIsig(kernel: Kernel, sig: number): number {
  const init = kernel.init
  if (!init) return 0
  const cpu = kernel.machine.current ?? kernel.machine.cpus[0]
  let reached = 0
  for (const t of kernel.tasks.values()) {
    // One delivery per process (kill_pgrp), to its leader.
    if (t.pid !== t.tgid || t.state === 'zombie' || t.pgid !== init.pgid) continue
    kernel.signals.sendSignal(cpu, t, { signo: sig, code: 0x80, pid: 0 }) // SI_KERNEL, as from the tty
    reached++
  }
  return reached
}
