// prctl(option, arg2, ...) (kernel/sys.c): the options programs call at
// startup. PR_SET_NAME/PR_GET_NAME read and set comm (busybox reads it to
// find its applet; probe fetchargs' $comm show the new name);
// PR_SET_PDEATHSIG/PR_GET_PDEATHSIG keep the signal exitTask sends a child
// when its parent dies; PR_GET_DUMPABLE/PR_SET_DUMPABLE the dumpable flag.
// PR_GET/SET_KEEPCAPS, PR_CAPBSET_READ (root's full bounding set),
// PR_GET_SECCOMP (none), PR_GET_TIMERSLACK (the default 50 us),
// PR_GET/SET_CHILD_SUBREAPER, PR_GET/SET_NO_NEW_PRIVS and PR_GET_THP_DISABLE
// keep or report their flag with Linux's argument checks. Any other option
// is -EINVAL, as Linux answers an option it does not know.

import { EINVAL } from '../errno.js'
import { copyFromUser, copyToUser, writeUserU32 } from '../mm/user-memory.js'
import { NSIG } from '../signal/signals.js'
import type { SyscallContext } from '../syscalls.js'
import { utf8Decode, utf8Encode } from '../utf8.js'

const PR_SET_PDEATHSIG = 1
const PR_GET_PDEATHSIG = 2
const PR_GET_DUMPABLE = 3
const PR_SET_DUMPABLE = 4
const PR_GET_KEEPCAPS = 7
const PR_SET_KEEPCAPS = 8
const PR_SET_NAME = 15
const PR_GET_NAME = 16
const PR_GET_SECCOMP = 21
const PR_CAPBSET_READ = 23
const PR_GET_TIMERSLACK = 30
const PR_SET_CHILD_SUBREAPER = 36
const PR_GET_CHILD_SUBREAPER = 37
const PR_SET_NO_NEW_PRIVS = 38
const PR_GET_NO_NEW_PRIVS = 39
const PR_GET_THP_DISABLE = 42
/** CAP_LAST_CAP: CAP_CHECKPOINT_RESTORE. */
const CAP_LAST_CAP = 40
/** init_task's timer_slack_ns. */
const TIMER_SLACK_NS = 50_000

/** TASK_COMM_LEN: comm is at most 15 bytes and a NUL. */
const TASK_COMM_LEN = 16

export function sysPrctl(
  { kernel, task }: SyscallContext,
  option: number,
  arg2: number,
  arg3: number,
  arg4: number,
  arg5: number,
): number {
  // option is an int; the other arguments unsigned longs, several of which must be 0.
  const restZero = arg3 === 0 && arg4 === 0 && arg5 === 0
  switch (option | 0) {
    case PR_GET_KEEPCAPS:
      return task.keepCaps ? 1 : 0
    case PR_SET_KEEPCAPS:
      if (arg2 !== 0 && arg2 !== 1) return -EINVAL // arg2 only (cap_task_prctl)
      task.keepCaps = arg2 === 1
      return 0
    case PR_CAPBSET_READ:
      return arg2 >= 0 && arg2 <= CAP_LAST_CAP ? 1 : -EINVAL
    case PR_GET_SECCOMP:
      return 0
    case PR_GET_TIMERSLACK:
      return TIMER_SLACK_NS
    case PR_SET_CHILD_SUBREAPER:
      task.isChildSubreaper = arg2 !== 0
      return 0
    case PR_GET_CHILD_SUBREAPER:
      writeUserU32(task.mm, arg2, task.isChildSubreaper ? 1 : 0)
      return 0
    case PR_SET_NO_NEW_PRIVS:
      if (arg2 !== 1 || !restZero) return -EINVAL
      task.noNewPrivs = true
      return 0
    case PR_GET_NO_NEW_PRIVS:
    case PR_GET_THP_DISABLE:
      if (arg2 !== 0 || !restZero) return -EINVAL
      return (option | 0) === PR_GET_NO_NEW_PRIVS && task.noNewPrivs ? 1 : 0
    case PR_SET_NAME: {
      // strncpy_from_user of at most 15 bytes: a name without a NUL in them is cut there.
      const bytes: number[] = []
      for (let k = 0; k < TASK_COMM_LEN - 1; k++) {
        const b = copyFromUser(task.mm, arg2 + k, 1)[0]
        if (b === 0) break
        bytes.push(b)
      }
      task.comm = utf8Decode(Uint8Array.from(bytes))
      kernel.updateGuestComm(task)
      return 0
    }
    case PR_GET_NAME: {
      const out = new Uint8Array(TASK_COMM_LEN)
      out.set(utf8Encode(task.comm).subarray(0, TASK_COMM_LEN - 1))
      copyToUser(task.mm, arg2, out)
      return 0
    }
    case PR_SET_PDEATHSIG:
      if (arg2 < 0 || arg2 > NSIG) return -EINVAL
      task.pdeathSignal = arg2
      return 0
    case PR_GET_PDEATHSIG:
      writeUserU32(task.mm, arg2, task.pdeathSignal)
      return 0
    case PR_GET_DUMPABLE:
      return task.mm.dumpable
    case PR_SET_DUMPABLE:
      if (arg2 !== 0 && arg2 !== 1) return -EINVAL
      task.mm.dumpable = arg2
      return 0
    default:
      return -EINVAL
  }
}
