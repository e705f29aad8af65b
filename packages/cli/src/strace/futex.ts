// futex(2) as strace's do_futex prints it: which arguments appear depends on
// the operation (FUTEX_WAKE shows only val, FUTEX_WAIT adds the timeout...).

import type { StraceMemory } from './memory.js'
import { hex, pointer, uint32 } from './numbers.js'
import { timespecAt } from './structs.js'
import { type Xlat, xval } from './xlat.js'

const BASE = [
  'FUTEX_WAIT',
  'FUTEX_WAKE',
  'FUTEX_FD',
  'FUTEX_REQUEUE',
  'FUTEX_CMP_REQUEUE',
  'FUTEX_WAKE_OP',
  'FUTEX_LOCK_PI',
  'FUTEX_UNLOCK_PI',
  'FUTEX_TRYLOCK_PI',
  'FUTEX_WAIT_BITSET',
  'FUTEX_WAKE_BITSET',
  'FUTEX_WAIT_REQUEUE_PI',
  'FUTEX_CMP_REQUEUE_PI',
  'FUTEX_LOCK_PI2',
]
const PRIVATE = 128
const CLOCK_REALTIME = 256

// strace's futexops table: each op, op|PRIVATE (FUTEX_FD has no _PRIVATE
// name), and the waits that take FUTEX_CLOCK_REALTIME.
const FUTEX_OPS: Xlat = [
  ...BASE.map((name, op) => [op, name] as const),
  ...BASE.map(
    (name, op) => [op | PRIVATE, op === 2 ? 'FUTEX_FD|FUTEX_PRIVATE_FLAG' : `${name}_PRIVATE`] as const,
  ),
  [0 | CLOCK_REALTIME, 'FUTEX_WAIT|FUTEX_CLOCK_REALTIME'],
  [0 | PRIVATE | CLOCK_REALTIME, 'FUTEX_WAIT_PRIVATE|FUTEX_CLOCK_REALTIME'],
  [9 | CLOCK_REALTIME, 'FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME'],
  [9 | PRIVATE | CLOCK_REALTIME, 'FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME'],
  [11 | CLOCK_REALTIME, 'FUTEX_WAIT_REQUEUE_PI|FUTEX_CLOCK_REALTIME'],
  [11 | PRIVATE | CLOCK_REALTIME, 'FUTEX_WAIT_REQUEUE_PI_PRIVATE|FUTEX_CLOCK_REALTIME'],
]

const WAKE_OPS: Xlat = [
  [0, 'FUTEX_OP_SET'],
  [1, 'FUTEX_OP_ADD'],
  [2, 'FUTEX_OP_OR'],
  [3, 'FUTEX_OP_ANDN'],
  [4, 'FUTEX_OP_XOR'],
]
const WAKE_CMPS: Xlat = [
  [0, 'FUTEX_OP_CMP_EQ'],
  [1, 'FUTEX_OP_CMP_NE'],
  [2, 'FUTEX_OP_CMP_LT'],
  [3, 'FUTEX_OP_CMP_LE'],
  [4, 'FUTEX_OP_CMP_GT'],
  [5, 'FUTEX_OP_CMP_GE'],
]

function bitset(v: number): string {
  return v === 0xffffffff ? 'FUTEX_BITSET_MATCH_ANY' : hex(v)
}

function wakeOp(v: number): string {
  let text = ''
  if ((v >>> 28) & 8) text += 'FUTEX_OP_OPARG_SHIFT<<28|'
  const op = (v >>> 28) & 7
  const opName = WAKE_OPS.find(([k]) => k === op)?.[1]
  text += opName ? `${opName}<<28` : `${op}<<28 /* FUTEX_OP_??? */`
  text += `|${hex((v >>> 12) & 0xfff)}<<12`
  const cmp = (v >>> 24) & 0xf
  const cmpName = WAKE_CMPS.find(([k]) => k === cmp)?.[1]
  text += cmpName ? `|${cmpName}<<24` : `|${cmp}<<24 /* FUTEX_OP_CMP_??? */`
  return `${text}|${hex(v & 0xfff)}`
}

/** The argument list of a futex call (all decoded on entry). */
export function futexArgs(args: readonly number[], mem: StraceMemory): string[] {
  const op = args[1] | 0
  const val = String(uint32(args[2]))
  const val2 = String(uint32(args[3]))
  const val3 = uint32(args[5])
  const out = [pointer(args[0]), xval(FUTEX_OPS, op >>> 0, 'FUTEX_???')]
  const timeout = () => timespecAt(mem, args[3])
  switch (op & 127) {
    case 0: // WAIT
      out.push(val, timeout())
      break
    case 6: // LOCK_PI
    case 13: // LOCK_PI2
      out.push(timeout())
      break
    case 9: // WAIT_BITSET
      out.push(val, timeout(), bitset(val3))
      break
    case 10: // WAKE_BITSET
      out.push(val, bitset(val3))
      break
    case 3: // REQUEUE
      out.push(val, val2, pointer(args[4]))
      break
    case 4: // CMP_REQUEUE
    case 12: // CMP_REQUEUE_PI
      out.push(val, val2, pointer(args[4]), String(val3))
      break
    case 5: // WAKE_OP
      out.push(val, val2, pointer(args[4]), wakeOp(val3))
      break
    case 11: // WAIT_REQUEUE_PI
      out.push(val, timeout(), pointer(args[4]))
      break
    case 1: // WAKE
    case 2: // FD
      out.push(val)
      break
    case 7: // UNLOCK_PI
    case 8: // TRYLOCK_PI
      break
    default:
      out.push(val, pointer(args[3]), pointer(args[4]), hex(val3))
  }
  return out
}
