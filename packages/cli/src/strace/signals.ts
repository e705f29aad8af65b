// Signal names and sets as strace prints them: SIGUSR1, SIGRTMIN, SIGRT_3,
// sets as [INT TERM] or, when two thirds or more are set, ~[KILL STOP].

import { signalName } from '@probekit/kernel'
import { readStruct, type StraceMemory } from './memory.js'
import { hex, pointer, unsignedDecimal } from './numbers.js'
import { flags, type Xlat } from './xlat.js'

/** The kernel's SIGRTMIN: strace names 32 SIGRTMIN and 32+n SIGRT_n. */
const RTMIN = 32
const NSIG = 64

/** SIGCHLD for 17; a number strace has no name for stays decimal. */
export function signalText(sig: number): string {
  if (sig >= 1 && sig < RTMIN) return signalName(sig)
  if (sig === RTMIN) return 'SIGRTMIN'
  if (sig > RTMIN && sig <= NSIG) return `SIGRT_${sig - RTMIN}`
  return String(sig)
}

/** A kernel sigset_t of 64 bits (bit n-1 is signal n). */
export function sigsetText(mask: bigint): string {
  let bits = BigInt.asUintN(64, mask)
  let prefix = ''
  let count = 0
  for (let b = bits; b; b &= b - 1n) count++
  // strace inverts a set that has at least 2/3 of the bits (42 of 64).
  if (count >= Math.floor((64 * 2) / 3)) {
    bits = BigInt.asUintN(64, ~bits)
    prefix = '~'
  }
  const names: string[] = []
  for (let sig = 1; sig <= NSIG; sig++) {
    if ((bits >> BigInt(sig - 1)) & 1n) names.push(signalText(sig).replace(/^SIG/, ''))
  }
  return `${prefix}[${names.join(' ')}]`
}

/** A sigset_t pointer with its size argument (print_sigset_addr_len). */
export function sigsetAt(mem: StraceMemory, addr: number, size: number): string {
  if (addr === 0) return 'NULL'
  if (size < 8 || size > 8) return hex(addr)
  const s = readStruct(mem, addr, 8)
  return s ? sigsetText(s.u64(0)) : hex(addr)
}

const SA_RESTORER = 0x04000000

export const SA_FLAGS: Xlat = [
  [SA_RESTORER, 'SA_RESTORER'],
  [0x08000000, 'SA_ONSTACK'],
  [0x10000000, 'SA_RESTART'],
  [0x20000000, 'SA_INTERRUPT'],
  [0x40000000, 'SA_NODEFER'],
  [0x80000000, 'SA_RESETHAND'],
  [4, 'SA_SIGINFO'],
  [1, 'SA_NOCLDSTOP'],
  [2, 'SA_NOCLDWAIT'],
]

function handlerText(handler: bigint): string {
  if (handler === 0n) return 'SIG_DFL'
  if (handler === 1n) return 'SIG_IGN'
  if (handler === BigInt.asUintN(64, -1n)) return 'SIG_ERR'
  return hex(handler)
}

/** struct kernel_sigaction {handler, flags, restorer, mask} (decode_sigaction). */
export function sigactionAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 32)
  if (!s) return hex(addr)
  const saFlags = s.u64(8)
  let text = `{sa_handler=${handlerText(s.u64(0))}, sa_mask=${sigsetText(s.u64(24))}, sa_flags=${flags(SA_FLAGS, saFlags)}`
  if (saFlags & BigInt(SA_RESTORER)) text += `, sa_restorer=${pointer(s.u64(16))}`
  return `${text}}`
}

export const SIGPROCMASK_HOW: Xlat = [
  [0, 'SIG_BLOCK'],
  [1, 'SIG_UNBLOCK'],
  [2, 'SIG_SETMASK'],
]

const SS_FLAGS: Xlat = [
  [1, 'SS_ONSTACK'],
  [2, 'SS_DISABLE'],
  [0x80000000, 'SS_AUTODISARM'],
]

/** stack_t {ss_sp, ss_flags, ss_size} (sigaltstack). */
export function stackAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 24)
  if (!s) return hex(addr)
  return `{ss_sp=${pointer(s.u64(0))}, ss_flags=${flags(SS_FLAGS, s.u32(8))}, ss_size=${unsignedDecimal(s.u64(16))}}`
}
