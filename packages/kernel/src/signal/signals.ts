// Signals: actions, masks, pending sets, and delivery on return to user
// mode with a real x86-64 rt_sigframe (siginfo + ucontext) on the user
// stack; rt_sigreturn restores the interrupted context from it.

import {
  type Cpu,
  newX87State,
  restoreX87State,
  x87FromFxsave,
  x87State,
  x87ToFxsave,
} from '@probekit/x86-emu'
import type { PtRegsFrame } from '../kernel.js'
import { copyFromUser, copyToUser } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'

export const SIGHUP = 1
export const SIGINT = 2
export const SIGQUIT = 3
export const SIGILL = 4
export const SIGTRAP = 5
export const SIGABRT = 6
export const SIGBUS = 7
export const SIGFPE = 8
export const SIGKILL = 9
export const SIGUSR1 = 10
export const SIGSEGV = 11
export const SIGUSR2 = 12
export const SIGPIPE = 13
export const SIGALRM = 14
export const SIGTERM = 15
export const SIGCHLD = 17
export const SIGCONT = 18
export const SIGSTOP = 19
export const SIGTSTP = 20
export const SIGTTIN = 21
export const SIGTTOU = 22
export const SIGURG = 23
export const SIGXCPU = 24
export const SIGXFSZ = 25
export const SIGWINCH = 28
export const SIGSYS = 31
export const NSIG = 64

export const SIG_DFL = 0
export const SIG_IGN = 1
export const SA_SIGINFO = 4
export const SA_RESTORER = 0x04000000
export const SA_ONSTACK = 0x08000000
export const SA_RESTART = 0x10000000
export const SA_NODEFER = 0x40000000
export const SA_RESETHAND = 0x80000000

export type DefaultAction = 'term' | 'core' | 'ign' | 'stop' | 'cont'

export function defaultAction(sig: number): DefaultAction {
  switch (sig) {
    case SIGQUIT:
    case SIGILL:
    case SIGTRAP:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGSEGV:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGSYS:
      return 'core'
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
      return 'ign'
    case SIGCONT:
      return 'cont'
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return 'stop'
    default:
      return 'term'
  }
}

export interface SigAction {
  handler: number
  flags: number
  restorer: number
  /** Blocked during the handler (bit n-1 for signal n). */
  mask: bigint
}

export interface SigInfo {
  signo: number
  code: number
  trapno?: number
  err?: number
  /** Sender pid (kill) or fault address (SIGSEGV, SIGBUS). */
  pid?: number
  addr?: number
  /** SIGCHLD: the exit code (CLD_EXITED) or the signal (CLD_KILLED, CLD_STOPPED, ...). */
  status?: number
  /** SIGCHLD: the child's user and system time in clock ticks. */
  utime?: number
  stime?: number
}

/** Shared by the threads of a process (CLONE_SIGHAND). */
export class SignalHandlers {
  readonly actions: SigAction[] = Array.from({ length: NSIG + 1 }, () => ({
    handler: SIG_DFL,
    flags: 0,
    restorer: 0,
    mask: 0n,
  }))
  clone(): SignalHandlers {
    const s = new SignalHandlers()
    this.actions.forEach((a, i) => {
      s.actions[i] = { ...a }
    })
    return s
  }
  /** execve: handled signals go back to default; ignored stay ignored. */
  resetOnExec(): void {
    for (const a of this.actions)
      if (a.handler !== SIG_IGN) Object.assign(a, { handler: SIG_DFL, flags: 0, restorer: 0, mask: 0n })
  }
}

export const bit = (sig: number): bigint => 1n << BigInt(sig - 1)

/** Is a signal pending that the task's mask lets through? */
export function hasDeliverableSignal(t: Task): boolean {
  for (const sig of t.pending.keys()) if ((t.blocked & bit(sig)) === 0n) return true
  return false
}

// SIGFPE si_codes.
export const FPE_INTDIV = 1
export const FPE_INTOVF = 2
export const FPE_FLTDIV = 3
export const FPE_FLTOVF = 4
export const FPE_FLTUND = 5
export const FPE_FLTRES = 6
export const FPE_FLTINV = 7
export const FPE_FLTSUB = 8

/**
 * Linux's fpu__exception_code(): the si_code of the SIGFPE for #MF (trap 16:
 * the unmasked x87 exceptions, FSW & ~FCW) or #XM (19: MXCSR flags & ~masks),
 * by priority invalid, divide, overflow, underflow/denormal, precision;
 * 0 for a spurious trap.
 */
export function fpuExceptionCode(fpu: FpuRegisters, trapnr: number): number {
  let err: number
  if (trapnr === 16) {
    const s = x87State(fpu)
    err = s.fsw & ~s.fcw
  } else err = ~(fpu.mxcsr >> 7) & fpu.mxcsr
  if (err & 0x001) return FPE_FLTINV // swd & 0x240: stack underflow/overflow, also "invalid"
  if (err & 0x004) return FPE_FLTDIV
  if (err & 0x008) return FPE_FLTOVF
  if (err & 0x012) return FPE_FLTUND
  if (err & 0x020) return FPE_FLTRES
  return 0
}

/** The FPU/SSE registers a signal frame saves: the CPU's. */
export type FpuRegisters = Cpu

const FXSAVE_SIZE = 512

/** The fxsave-format image (64-bit layout) of the FPU/SSE state. */
function fxsaveImage(fpu: FpuRegisters): Uint8Array {
  const b = new Uint8Array(FXSAVE_SIZE)
  const v = new DataView(b.buffer)
  x87ToFxsave(x87State(fpu), b, true)
  v.setInt32(24, fpu.mxcsr, true)
  v.setInt32(28, 0xffff, true)
  for (let i = 0; i < 64; i++) v.setInt32(160 + 4 * i, fpu.xmm[i], true)
  return b
}
const UNBLOCKABLE = bit(SIGKILL) | bit(SIGSTOP)

export function sanitizeMask(m: bigint): bigint {
  return BigInt.asUintN(64, m) & ~UNBLOCKABLE
}

// rt_sigframe layout (arch/x86/include/asm/sigframe.h, 64-bit).
const UC = 8 // struct ucontext after pretcode
const MCONTEXT = UC + 40 // uc_flags, uc_link, uc_stack(24)
const SIGMASK = MCONTEXT + 256
const INFO = SIGMASK + 8 + 0 // struct siginfo (128 bytes)
const FRAME_SIZE = INFO + 128
/** sigcontext order: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags. */
const SIGCONTEXT_REGS = [
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
  'di',
  'si',
  'bp',
  'bx',
  'dx',
  'ax',
  'cx',
  'sp',
  'ip',
  'flags',
] as const

function put64(v: DataView, o: number, x: number | bigint): void {
  v.setBigUint64(o, BigInt.asUintN(64, BigInt(x)), true)
}
function get64(v: DataView, o: number): number {
  return Number(BigInt.asIntN(64, v.getBigUint64(o, true)))
}

/**
 * Build the signal frame for `sig` on the task's user stack and point the
 * frame's registers at the handler. Returns false when the stack cannot be
 * written (the caller then kills the task with SIGSEGV, as Linux does).
 */
export function setupRtFrame(
  task: Task,
  frame: PtRegsFrame,
  info: SigInfo,
  action: SigAction,
  oldMask: bigint,
  trapno = 0,
  err = 0,
  cr2 = 0,
  fpu: FpuRegisters | null = null,
): boolean {
  let sp = frame.get('sp')
  // SA_ONSTACK: run the handler on the alternate stack, unless already on it.
  const alt = task.altStack
  const onAlt = alt.size > 0 && sp > alt.sp && sp <= alt.sp + alt.size
  if ((action.flags & SA_ONSTACK) !== 0 && alt.size > 0 && !onAlt) sp = alt.sp + alt.size
  // Below the red zone: the FPU state (fxsave layout, 64-byte aligned), then the frame itself.
  const fpstate = fpu ? Math.floor((sp - 128 - FXSAVE_SIZE) / 64) * 64 : sp - 128
  const start = Math.floor((fpstate - FRAME_SIZE) / 16) * 16 - 8 // as after a call: (rsp + 8) % 16 == 0 in the handler
  const b = new Uint8Array(FRAME_SIZE)
  const v = new DataView(b.buffer)
  put64(v, 0, action.restorer)
  put64(v, UC, 0x6) // UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
  SIGCONTEXT_REGS.forEach((r, i) => {
    put64(v, MCONTEXT + 8 * i, frame.get(r))
  })
  v.setUint16(MCONTEXT + 144, frame.get('cs'), true)
  v.setUint16(MCONTEXT + 150, frame.get('ss'), true)
  put64(v, MCONTEXT + 152, err)
  put64(v, MCONTEXT + 160, trapno)
  put64(v, MCONTEXT + 168, oldMask & 0xffffffffn)
  put64(v, MCONTEXT + 176, cr2)
  put64(v, MCONTEXT + 184, fpu ? fpstate : 0)
  put64(v, SIGMASK, oldMask)
  v.setInt32(INFO, info.signo, true)
  v.setInt32(INFO + 8, info.code, true)
  if (info.addr !== undefined) put64(v, INFO + 16, info.addr)
  else if (info.pid !== undefined) v.setInt32(INFO + 16, info.pid, true) // si_uid (+20) is root's 0
  if (info.status !== undefined) {
    // _sigchld: si_status, then si_utime and si_stime (clock_t) 8-aligned.
    v.setInt32(INFO + 24, info.status, true)
    put64(v, INFO + 32, info.utime ?? 0)
    put64(v, INFO + 40, info.stime ?? 0)
  }
  try {
    copyToUser(task.mm, start, b)
    if (fpu) copyToUser(task.mm, fpstate, fxsaveImage(fpu))
  } catch {
    return false
  }
  // fpu__clear_user_states: the handler starts from the initial FPU state (so a
  // pending x87 exception or unmasked MXCSR of the interrupted code does not follow it).
  if (fpu) {
    restoreX87State(x87State(fpu), newX87State())
    fpu.mxcsr = 0x1f80
    fpu.xmm.fill(0)
  }
  frame.set('sp', start)
  frame.set('ip', action.handler)
  frame.set('di', info.signo)
  frame.set('si', start + INFO)
  frame.set('dx', start + UC)
  frame.set('ax', 0)
  frame.set('flags', frame.get('flags') & ~0x40500) // clear TF, DF, AC as Linux does
  return true
}

/** rt_sigreturn: restore the context saved at (rsp - 8); returns the mask to restore, or null when the frame is bad. */
export function restoreRtFrame(
  task: Task,
  frame: PtRegsFrame,
  fpu: FpuRegisters | null = null,
): bigint | null {
  const start = frame.get('sp') - 8
  let b: Uint8Array
  try {
    b = copyFromUser(task.mm, start, FRAME_SIZE)
  } catch {
    return null
  }
  const v = new DataView(b.buffer)
  const fpstate = get64(v, MCONTEXT + 184)
  if (fpu && fpstate !== 0) {
    try {
      const image = copyFromUser(task.mm, fpstate, FXSAVE_SIZE)
      const iv = new DataView(image.buffer)
      x87FromFxsave(x87State(fpu), image, true)
      fpu.mxcsr = iv.getInt32(24, true) & 0xffff
      for (let i = 0; i < 64; i++) fpu.xmm[i] = iv.getInt32(160 + 4 * i, true)
    } catch {
      return null
    }
  }
  SIGCONTEXT_REGS.forEach((r, i) => {
    const x = get64(v, MCONTEXT + 8 * i)
    frame.set(r, r === 'flags' ? (frame.get('flags') & ~0x254dd5) | (x & 0x254dd5) : x)
  })
  frame.set('cs', 0x33)
  frame.set('ss', 0x2b)
  frame.set('orig_ax', -1)
  return BigInt.asUintN(64, v.getBigUint64(SIGMASK, true))
}

const SIGNAL_NAMES = [
  '',
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGILL',
  'SIGTRAP',
  'SIGABRT',
  'SIGBUS',
  'SIGFPE',
  'SIGKILL',
  'SIGUSR1',
  'SIGSEGV',
  'SIGUSR2',
  'SIGPIPE',
  'SIGALRM',
  'SIGTERM',
  'SIGSTKFLT',
  'SIGCHLD',
  'SIGCONT',
  'SIGSTOP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGURG',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGVTALRM',
  'SIGPROF',
  'SIGWINCH',
  'SIGIO',
  'SIGPWR',
  'SIGSYS',
]

export function signalName(sig: number): string {
  return SIGNAL_NAMES[sig] ?? `SIGRT${sig}`
}
