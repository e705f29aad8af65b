// The line strace prints when a signal is delivered:
// --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3, ...} ---
// following printsiginfo.c: which fields appear depends on who sent it
// (si_code <= 0: a process, with si_pid/si_uid) and on the signal.

import { errnoName } from '@probekit/kernel'
import { hex, pointer } from './numbers.js'
import { signalText } from './signals.js'
import { lookup, type Xlat } from './xlat.js'

export interface SignalInfo {
  signo: number
  code: number
  pid?: number
  uid?: number
  /** SIGCHLD: the exit code (CLD_EXITED) or signal number. */
  status?: number
  /** SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP: the faulting address. */
  addr?: number
  errno?: number
  /** SIGCHLD: the child's user and system time in clock ticks. */
  utime?: number
  stime?: number
  /** sigqueue's si_value (si_int/si_ptr), shown when non-zero. */
  value?: number
}

const SI_CODES: Xlat = [
  [0, 'SI_USER'],
  [0x80, 'SI_KERNEL'],
  [-1, 'SI_QUEUE'],
  [-2, 'SI_TIMER'],
  [-3, 'SI_MESGQ'],
  [-4, 'SI_ASYNCIO'],
  [-5, 'SI_SIGIO'],
  [-6, 'SI_TKILL'],
  [-7, 'SI_DETHREAD'],
  [-60, 'SI_ASYNCNL'],
]

const SIGNAL_CODES: Record<number, readonly string[]> = {
  4: [
    'ILL_ILLOPC',
    'ILL_ILLOPN',
    'ILL_ILLADR',
    'ILL_ILLTRP',
    'ILL_PRVOPC',
    'ILL_PRVREG',
    'ILL_COPROC',
    'ILL_BADSTK',
    'ILL_BADIADDR',
  ],
  5: ['TRAP_BRKPT', 'TRAP_TRACE', 'TRAP_BRANCH', 'TRAP_HWBKPT', 'TRAP_UNK', 'TRAP_PERF'],
  7: ['BUS_ADRALN', 'BUS_ADRERR', 'BUS_OBJERR', 'BUS_MCEERR_AR', 'BUS_MCEERR_AO'],
  8: [
    'FPE_INTDIV',
    'FPE_INTOVF',
    'FPE_FLTDIV',
    'FPE_FLTOVF',
    'FPE_FLTUND',
    'FPE_FLTRES',
    'FPE_FLTINV',
    'FPE_FLTSUB',
  ],
  11: [
    'SEGV_MAPERR',
    'SEGV_ACCERR',
    'SEGV_BNDERR',
    'SEGV_PKUERR',
    'SEGV_ACCADI',
    'SEGV_ADIDERR',
    'SEGV_ADIPERR',
    'SEGV_MTEAERR',
    'SEGV_MTESERR',
    'SEGV_CPERR',
  ],
  17: ['CLD_EXITED', 'CLD_KILLED', 'CLD_DUMPED', 'CLD_TRAPPED', 'CLD_STOPPED', 'CLD_CONTINUED'],
  29: ['POLL_IN', 'POLL_OUT', 'POLL_MSG', 'POLL_ERR', 'POLL_PRI', 'POLL_HUP'],
  31: ['SYS_SECCOMP', 'SYS_USER_DISPATCH'],
}

function codeText(signo: number, code: number): string {
  const general = lookup(SI_CODES, code)
  if (general) return general
  const specific = code > 0 ? SIGNAL_CODES[signo]?.[code - 1] : undefined
  if (specific) return specific
  if (signo === 8 && code === 14) return 'FPE_FLTUNK'
  if (signo === 8 && code === 15) return 'FPE_CONDTRAP'
  return hex(code >>> 0)
}

/** '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---' */
export function formatSignal(info: SignalInfo): string {
  const { signo, code } = info
  const fields = [`si_signo=${signalText(signo)}`, `si_code=${codeText(signo, code)}`]
  if (info.errno) fields.push(`si_errno=${errnoName(info.errno)}`)
  const source = () => fields.push(`si_pid=${info.pid ?? 0}`, `si_uid=${info.uid ?? 0}`)
  const value = () => {
    if (info.value) fields.push(`si_int=${info.value | 0}`, `si_ptr=${pointer(info.value)}`)
  }
  if (code <= 0) {
    // Sent by a process (kill, tgkill, sigqueue).
    source()
    if (code !== 0 && code !== -6) value()
  } else {
    switch (signo) {
      case 17: // SIGCHLD
        source()
        fields.push(
          `si_status=${code === 1 ? (info.status ?? 0) : signalText(info.status ?? 0)}`,
          `si_utime=${info.utime ?? 0}`,
          `si_stime=${info.stime ?? 0}`,
        )
        break
      case 4: // SIGILL, SIGFPE, SIGBUS, SIGSEGV, SIGTRAP: where it happened
      case 8:
      case 7:
      case 11:
      case 5:
        fields.push(`si_addr=${pointer(info.addr ?? 0)}`)
        break
      default:
        if (info.pid || info.uid) source()
        value()
    }
  }
  return `--- ${signalText(signo)} {${fields.join(', ')}} ---`
}
