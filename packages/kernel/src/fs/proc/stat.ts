// /proc/PID/stat (fs/proc/array.c do_task_stat): 52 fields on one line, in
// Linux's order (proc(5)). Times are in USER_HZ ticks of the virtual
// clock, all of it user time. Not kept here, so 0: page fault counts,
// starttime, and the controlling terminal (tty_nr 0, tpgid -1: the
// console is no tty device); kstkesp/kstkeip are 0 as Linux prints them
// for a task that is not dumping core.

import type { Kernel } from '../../kernel.js'
import type { Task } from '../../sched/task.js'
import { mmCounters } from './task-mem.js'
import { clockTicks, pendingSet, signalSets, taskState, taskTime, threadGroup } from './task-state.js'

const PF_EXITING = 0x4
const SIGCHLD = 17
const RLIMIT_RSS = 5

export function showStat(kernel: Kernel, t: Task): string {
  const alive = t.state !== 'zombie'
  const group = threadGroup(kernel, t)
  const leader = kernel.tasks.get(t.tgid) ?? t
  const mm = alive ? t.mm : null
  const counters = mm ? mmCounters(mm) : null
  const layout = mm?.execLayout ?? null
  const { ignored, caught } = signalSets(t)
  const utime = group.reduce((ns, x) => ns + taskTime(kernel, x), 0)
  const exitCode = alive ? 0 : t.exitSignal ? t.exitSignal : t.exitCode << 8
  const fields: (number | bigint | string)[] = [
    t.pid,
    `(${t.comm})`,
    taskState(t)[0],
    t.parent ? t.parent.tgid : 0,
    t.pgid,
    t.sid,
    0, // tty_nr
    -1, // tpgid
    alive ? 0 : PF_EXITING,
    0, // minflt
    0, // cminflt
    0, // majflt
    0, // cmajflt
    clockTicks(utime),
    0, // stime
    clockTicks(leader.cutime),
    0, // cstime
    20, // priority: nice 0
    0, // nice
    group.filter((x) => x.state !== 'zombie').length || 1,
    0, // itrealvalue
    0, // starttime
    counters ? counters.totalVm * 4096 : 0, // vsize
    counters ? counters.anonRss + counters.fileRss : 0, // rss
    t.rlimits[RLIMIT_RSS]?.cur ?? 0n,
    layout?.startCode ?? 0,
    layout?.endCode ?? 0,
    layout?.startStack ?? 0,
    0, // kstkesp
    0, // kstkeip
    pendingSet(t),
    t.blocked,
    ignored,
    caught,
    alive && t.state !== 'running' && t.state !== 'runnable' ? 1 : 0, // wchan: sleeping somewhere
    0, // nswap
    0, // cnswap
    t.isThreadGroupLeader ? SIGCHLD : -1, // exit_signal
    Math.max(0, t.cpu), // processor
    0, // rt_priority
    0, // policy: SCHED_NORMAL
    0, // delayacct_blkio_ticks
    0, // guest_time
    0, // cguest_time
    layout?.startData ?? 0,
    layout?.endData ?? 0,
    mm?.brkStart ?? 0, // start_brk
    layout?.argStart ?? 0,
    layout?.argEnd ?? 0,
    layout?.envStart ?? 0,
    layout?.envEnd ?? 0,
    exitCode,
  ]
  return `${fields.join(' ')}\n`
}
