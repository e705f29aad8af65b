// How utrace_get_signal classifies a dequeued signal before the engines see
// it: which event it is and what its delivery would do, from its action and
// its default (sig_kernel_coredump, sig_kernel_ignore, sig_kernel_stop).

import { defaultAction, SIG_DFL, SIG_IGN, SIGSTOP, type SigAction } from '@probekit/kernel'
import {
  UTRACE_EVENT,
  UTRACE_SIGNAL_CORE,
  UTRACE_SIGNAL_DELIVER,
  UTRACE_SIGNAL_IGN,
  UTRACE_SIGNAL_STOP,
  UTRACE_SIGNAL_TERM,
  UTRACE_SIGNAL_TSTP,
} from './constants.js'

export interface SignalEvent {
  /** The UTRACE_EVENT bit engines must want to see it. */
  event: number
  /** The initial signal action (UTRACE_SIGNAL_*). */
  result: number
}

export function classifySignal(signo: number, ka: SigAction): SignalEvent {
  if (ka.handler === SIG_IGN) return { event: UTRACE_EVENT.SIGNAL_IGN, result: UTRACE_SIGNAL_IGN }
  if (ka.handler !== SIG_DFL) return { event: UTRACE_EVENT.SIGNAL, result: UTRACE_SIGNAL_DELIVER }
  switch (defaultAction(signo)) {
    case 'core':
      return { event: UTRACE_EVENT.SIGNAL_CORE, result: UTRACE_SIGNAL_CORE }
    case 'ign':
    case 'cont':
      return { event: UTRACE_EVENT.SIGNAL_IGN, result: UTRACE_SIGNAL_IGN }
    case 'stop':
      return signo === SIGSTOP
        ? { event: UTRACE_EVENT.SIGNAL_STOP, result: UTRACE_SIGNAL_STOP }
        : { event: UTRACE_EVENT.SIGNAL_STOP, result: UTRACE_SIGNAL_TSTP }
    default:
      return { event: UTRACE_EVENT.SIGNAL_TERM, result: UTRACE_SIGNAL_TERM }
  }
}

/** sig_kernel_ignore: the signals whose default action is to do nothing. */
export function sigKernelIgnore(signo: number): boolean {
  const d = defaultAction(signo)
  return d === 'ign' || d === 'cont'
}
