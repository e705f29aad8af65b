// Fetching and printing probe arguments (kernel/trace/trace_probe.c):
// each FETCHARG is evaluated against the trapped CPU's pt_regs and memory,
// then printed by its type. A memory read that faults prints "(fault)".
// A uprobe's fetches (trace_uprobe.c) read only the hitting task's user
// memory, and resolve @+FILE_OFFSET through the probed file's mapping.

import type { Kernel, PtRegsFrame } from '../kernel.js'
import { copyFromUser } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import { utf8Decode } from '../utf8.js'
import type { FetchArg, FetchType, ProbeArg } from './probe-definition.js'

class FetchFault extends Error {}

/** What a fetch runs against. */
export interface FetchContext {
  kernel: Kernel
  regs: PtRegsFrame
  task: Task
  /** A uprobe's fetch: every read is of the task's user memory (a kernel address is a fault). */
  user?: boolean
  /** @+FILE_OFFSET: the address where that offset of the probed file is mapped in the task (null: a fault). */
  fileAddress?: (fileOffset: number) => number | null
}

/** Read kernel-virtual memory through the kernel page tables (a miss is a fault). */
function readKernelVirtual(k: Kernel, addr: number, len: number): Uint8Array {
  const out = new Uint8Array(len)
  for (let i = 0; i < len; ) {
    const a = addr + i
    const page = Math.floor(a / 4096) * 4096
    const m = k.image.kernelSpace.lookup(page)
    if (!m) throw new FetchFault()
    const off = a - page
    const n = Math.min(4096 - off, len - i)
    out.set(k.machine.memory.bytes.subarray(m.frame * 4096 + off, m.frame * 4096 + off + n), i)
    i += n
  }
  return out
}

function readMemory(ctx: FetchContext, addr: number, len: number, user: boolean): Uint8Array {
  try {
    return user || ctx.user || addr >= 0
      ? copyFromUser(ctx.task.mm, addr, len)
      : readKernelVirtual(ctx.kernel, addr, len)
  } catch {
    throw new FetchFault()
  }
}

function u64(b: Uint8Array): bigint {
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true)
}

const SIZES: Record<string, number> = { 8: 1, 16: 2, 32: 4, 64: 8 }

/** The value of a fetch as an unsigned 64-bit word (the address, for memory fetches, is resolved one level). */
function word(ctx: FetchContext, f: FetchArg): bigint {
  switch (f.kind) {
    case 'reg':
      return BigInt.asUintN(64, BigInt(ctx.regs.get(f.reg === 'flags' ? 'flags' : (f.reg as never))))
    case 'stackpointer':
      return BigInt.asUintN(64, BigInt(ctx.regs.get('sp')))
    case 'stack':
      return u64(readMemory(ctx, ctx.regs.get('sp') + 8 * f.index, 8, false))
    case 'retval':
      return BigInt.asUintN(64, BigInt(ctx.regs.get('ax')))
    case 'imm':
      return BigInt.asUintN(64, f.value)
    case 'mem':
      return u64(readMemory(ctx, Number(BigInt.asIntN(64, f.address)), 8, false))
    case 'symbol': {
      const a = ctx.kernel.kallsyms.lookupName(f.symbol)
      if (a === undefined) throw new FetchFault()
      return u64(readMemory(ctx, a + f.offset, 8, false))
    }
    case 'deref': {
      const base = Number(BigInt.asIntN(64, word(ctx, f.inner)))
      return u64(readMemory(ctx, base + f.offset, 8, f.user))
    }
    case 'fileoffset':
      return u64(readMemory(ctx, fileAddress(ctx, f.offset), 8, true))
    case 'comm':
      return 0n
  }
}

function fileAddress(ctx: FetchContext, offset: number): number {
  const a = ctx.fileAddress?.(offset) ?? null
  if (a === null) throw new FetchFault()
  return a
}

/** Where a memory fetch reads (for sized and string reads), or null for register-like fetches. */
function addressOf(ctx: FetchContext, f: FetchArg): { addr: number; user: boolean } | null {
  switch (f.kind) {
    case 'mem':
      return { addr: Number(BigInt.asIntN(64, f.address)), user: false }
    case 'symbol': {
      const a = ctx.kernel.kallsyms.lookupName(f.symbol)
      if (a === undefined) throw new FetchFault()
      return { addr: a + f.offset, user: false }
    }
    case 'deref':
      return { addr: Number(BigInt.asIntN(64, word(ctx, f.inner))) + f.offset, user: f.user }
    case 'stack':
      return { addr: ctx.regs.get('sp') + 8 * f.index, user: false }
    case 'fileoffset':
      return { addr: fileAddress(ctx, f.offset), user: true }
    default:
      return null
  }
}

function formatValue(v: bigint, type: FetchType): string {
  const bits = Number(type.slice(1))
  const u = BigInt.asUintN(bits, v)
  if (type.startsWith('u')) return u.toString()
  if (type.startsWith('s')) return BigInt.asIntN(bits, v).toString()
  return `0x${u.toString(16)}`
}

/** One argument as trace_probe prints it: name=value. */
export function fetchArg(ctx: FetchContext, arg: ProbeArg): string {
  try {
    if (arg.fetch.kind === 'comm') return `${arg.name}="${ctx.task.comm}"`
    if (arg.type === 'string') {
      const at = addressOf(ctx, arg.fetch) ?? {
        addr: Number(BigInt.asIntN(64, word(ctx, arg.fetch))),
        user: false,
      }
      const bytes: number[] = []
      for (let i = 0; i < 4096; i++) {
        const b = readMemory(ctx, at.addr + i, 1, at.user)[0]
        if (b === 0) break
        bytes.push(b)
      }
      return `${arg.name}="${utf8Decode(Uint8Array.from(bytes))}"`
    }
    const size = SIZES[arg.type.slice(1)]
    const at = addressOf(ctx, arg.fetch)
    let v: bigint
    if (at && arg.fetch.kind !== 'stack') {
      const b = readMemory(ctx, at.addr, size, at.user)
      v = 0n
      for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
    } else v = word(ctx, arg.fetch)
    return `${arg.name}=${formatValue(v, arg.type)}`
  } catch (e) {
    if (e instanceof FetchFault) return `${arg.name}=(fault)`
    throw e
  }
}

/**
 * Where a uprobe hit, as print_uprobe_event prints it: `0x<vaddr>` for an
 * entry, `0x<return address> <- 0x<function>` for a return.
 */
export function uprobeWhere(ip: number, func?: number): string {
  const hex = (a: number) => `0x${BigInt.asUintN(64, BigInt(a)).toString(16)}`
  return func === undefined ? hex(ip) : `${hex(ip)} <- ${hex(func)}`
}

/**
 * A trace line in the ftrace format:
 * `            comm-pid     [cpu] d.... secs.usecs: event: (where) args`
 */
export function traceLine(opts: {
  comm: string
  pid: number
  cpu: number
  nanoseconds: number
  event: string
  where: string
  args: string[]
}): string {
  // trace_output.c: "%16s-%-7d " then "[%03d] ".
  const task = `${opts.comm.padStart(16)}-${String(opts.pid).padEnd(7)}`
  const cpu = `[${String(opts.cpu).padStart(3, '0')}]`
  const secs = Math.floor(opts.nanoseconds / 1e9)
  const usecs = Math.floor((opts.nanoseconds % 1e9) / 1000)
  const ts = `${String(secs).padStart(5)}.${String(usecs).padStart(6, '0')}`
  const args = opts.args.length ? ` ${opts.args.join(' ')}` : ''
  return `${task} ${cpu} d.... ${ts}: ${opts.event}: (${opts.where})${args}`
}
