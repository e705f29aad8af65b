// Fetching and printing probe arguments (kernel/trace/trace_probe.c,
// trace_probe_tmpl.h, trace_kprobe.c): each FETCHARG is evaluated against
// the trapped CPU's pt_regs and memory, then printed by its type. A memory
// read that faults prints "(fault)" (for an array, that element).
//
// Kernel and user memory are told apart as on x86-64 Linux: a kprobe's
// plain dereference, @ADDR, @SYM and :string read kernel memory
// (copy_from_kernel_nofault), which refuses a user address; +u dereferences
// and :ustring read the current task's user memory (copy_from_user), which
// refuses a kernel address. A uprobe's fetches (trace_uprobe.c) read only
// the hitting task's user memory, and resolve @+FILE_OFFSET through the
// probed file's mapping.

import type { Kernel, PtRegsFrame } from '../kernel.js'
import { copyFromUser } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import { utf8Decode } from '../utf8.js'
import type { FetchArg, ProbeArg } from './probe-definition.js'

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
  /** A return probe's $argN: the arguments as they were at function entry (see functionArgument). */
  entryArgs?: ReadonlyMap<number, bigint>
}

/** MAX_STRING_SIZE: PATH_MAX. */
const MAX_STRING_SIZE = 4096

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

/**
 * One read as the fetch's kind of access makes it. Addresses are signed:
 * the kernel half is negative. Kernel reads of the user half fault (x86's
 * copy_from_kernel_nofault_allowed), user reads of the kernel half fault
 * (access_ok); a uprobe reads user memory only.
 */
function readMemory(ctx: FetchContext, addr: number, len: number, user: boolean): Uint8Array {
  if (ctx.user || user) {
    if (addr < 0) throw new FetchFault()
    try {
      return copyFromUser(ctx.task.mm, addr, len)
    } catch {
      throw new FetchFault()
    }
  }
  if (addr >= 0) throw new FetchFault()
  return readKernelVirtual(ctx.kernel, addr, len)
}

/** Little-endian unsigned value of size bytes at addr. */
function readUnsigned(ctx: FetchContext, addr: number, size: number, user: boolean): bigint {
  const b = readMemory(ctx, addr, size, user)
  let v = 0n
  for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
  return v
}

const toAddress = (v: bigint) => Number(BigInt.asIntN(64, v))

/**
 * regs_get_kernel_stack_nth (a uprobe: get_user_stack_nth): the Nth word
 * above the stack pointer, 0 when it cannot be read.
 */
function stackNth(ctx: FetchContext, n: number): bigint {
  const addr = ctx.regs.get('sp') + 8 * n
  try {
    // The kernel stack as it is; a user-mode pt_regs (tests, uprobes) has a user one.
    return ctx.user || addr >= 0
      ? readUnsigned(ctx, addr, 8, true)
      : u64(readKernelVirtual(ctx.kernel, addr, 8))
  } catch (e) {
    if (e instanceof FetchFault) return 0n
    throw e
  }
}

function u64(b: Uint8Array): bigint {
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true)
}

const ARG_REGISTERS = ['di', 'si', 'dx', 'cx', 'r8', 'r9'] as const

/**
 * regs_get_kernel_argument: the Nth argument (N from 1) by the x86-64
 * calling convention, %di %si %dx %cx %r8 %r9, then the stack above the
 * return address ($arg7 is the word at %sp+8). Valid at a function's entry.
 */
export function functionArgument(
  ctx: Pick<FetchContext, 'kernel' | 'regs' | 'task' | 'user'>,
  n: number,
): bigint {
  if (n <= ARG_REGISTERS.length) return BigInt.asUintN(64, BigInt(ctx.regs.get(ARG_REGISTERS[n - 1])))
  return stackNth(ctx, n - ARG_REGISTERS.length)
}

/** The value of a fetch as an unsigned 64-bit word (memory fetches load one word). */
function value(ctx: FetchContext, f: FetchArg): bigint {
  switch (f.kind) {
    case 'reg':
      return BigInt.asUintN(64, BigInt(ctx.regs.get(f.reg as never)))
    case 'stackpointer':
      return BigInt.asUintN(64, BigInt(ctx.regs.get('sp')))
    case 'stack':
      return stackNth(ctx, f.index)
    case 'arg':
      return ctx.entryArgs ? (ctx.entryArgs.get(f.index) ?? 0n) : functionArgument(ctx, f.index)
    case 'retval':
      return BigInt.asUintN(64, BigInt(ctx.regs.get('ax')))
    case 'imm':
      return BigInt.asUintN(64, f.value)
    case 'comm':
    case 'immstr':
      return 0n
    default: {
      const at = location(ctx, f)
      if (!at) return 0n
      return readUnsigned(ctx, at.addr, 8, at.user)
    }
  }
}

/** Where a memory fetch's last load reads (a string or sized value is read there instead), or null. */
function location(ctx: FetchContext, f: FetchArg): { addr: number; user: boolean } | null {
  switch (f.kind) {
    case 'mem':
      return { addr: toAddress(f.address), user: false }
    case 'symbol': {
      const a = ctx.kernel.kallsyms.lookupName(f.symbol)
      if (a === undefined) throw new FetchFault()
      return { addr: a + f.offset, user: false }
    }
    case 'deref':
      return { addr: toAddress(value(ctx, f.inner)) + f.offset, user: f.user }
    case 'fileoffset': {
      const a = ctx.fileAddress?.(f.offset) ?? null
      if (a === null) throw new FetchFault()
      return { addr: a, user: true }
    }
    default:
      return null
  }
}

/** A NUL-terminated string (at most MAX_STRING_SIZE - 1 bytes), a fault if its first byte cannot be read. */
function readString(ctx: FetchContext, addr: number, user: boolean): string {
  const bytes: number[] = []
  for (let i = 0; i < MAX_STRING_SIZE - 1; i++) {
    const b = readMemory(ctx, addr + i, 1, user)[0]
    if (b === 0) break
    bytes.push(b)
  }
  return utf8Decode(Uint8Array.from(bytes))
}

/** %pS: sym+0xoff/0xsize for an address in the kernel image, else the hex value. */
export function symbolText(kernel: Kernel, v: bigint): string {
  const addr = toAddress(v)
  const ks = kernel.kallsyms
  const lo = ks.lookupName('_text')
  const hi = ks.lookupName('_end')
  if (lo !== undefined && hi !== undefined && addr >= lo && addr < hi) return ks.format(addr)
  return `0x${BigInt.asUintN(64, v).toString(16)}`
}

const SIZES: Record<string, number> = {
  u8: 1,
  s8: 1,
  x8: 1,
  char: 1,
  u16: 2,
  s16: 2,
  x16: 2,
  u32: 4,
  s32: 4,
  x32: 4,
  u64: 8,
  s64: 8,
  x64: 8,
  symbol: 8,
}

/** A stored value as its print_type_* prints it, after a bitfield's shifts. */
function formatScalar(ctx: FetchContext, v: bigint, arg: ProbeArg): string {
  const bits = SIZES[arg.type] * 8
  let u = BigInt.asUintN(bits, v)
  if (arg.bitfield) {
    const { width, offset } = arg.bitfield
    u = BigInt.asUintN(bits, u << BigInt(bits - width - offset)) >> BigInt(bits - width)
  }
  const t = arg.type
  if (t === 'char') return `'${String.fromCharCode(Number(u))}'`
  if (t === 'symbol') return symbolText(ctx.kernel, u)
  if (t[0] === 'u') return u.toString()
  if (t[0] === 's') return BigInt.asIntN(bits, u).toString()
  return `0x${u.toString(16)}`
}

/** Each element's text, or (fault) for one that cannot be read. */
function elements(n: number, one: (i: number) => string): string {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    try {
      out.push(one(i))
    } catch (e) {
      if (!(e instanceof FetchFault)) throw e
      out.push('(fault)')
    }
  }
  return `{${out.join(',')}}`
}

/** An argument's value as trace_probe prints it (print_probe_args). */
function argText(ctx: FetchContext, arg: ProbeArg): string {
  const f = arg.fetch
  const count = arg.count ?? 0
  if (f.kind === 'comm') return `"${ctx.task.comm}"`
  if (f.kind === 'immstr') return `"${f.value}"`
  if (arg.type === 'symstr') return `"${symbolText(ctx.kernel, value(ctx, f))}"`
  if (arg.type === 'string' || arg.type === 'ustring') {
    const ustring = arg.type === 'ustring'
    const at = location(ctx, f)
    if (count === 0) {
      // A dereference's load is replaced by the string read (FETCH_OP_ST_[U]STRING); an
      // immediate is the string's address.
      if (at) return `"${readString(ctx, at.addr, ustring || at.user)}"`
      return `"${readString(ctx, toAddress(value(ctx, f)), ustring)}"`
    }
    // TYPE[N]: N pointers from the address, each to a string.
    if (at)
      return elements(count, (i) => {
        const p = readUnsigned(ctx, at.addr + 8 * i, 8, at.user)
        return `"${readString(ctx, toAddress(p), ustring)}"`
      })
    // An immediate's array: Linux reads the first string and fails the rest (-EILSEQ).
    const imm = toAddress(value(ctx, f))
    return elements(count, (i) => {
      if (i > 0) throw new FetchFault()
      return `"${readString(ctx, imm, ustring)}"`
    })
  }
  const size = SIZES[arg.type]
  const at = location(ctx, f)
  if (count > 0 && at)
    return elements(count, (i) =>
      formatScalar(ctx, readUnsigned(ctx, at.addr + size * i, size, at.user), arg),
    )
  const v = at ? readUnsigned(ctx, at.addr, size, at.user) : value(ctx, f)
  return formatScalar(ctx, v, arg)
}

/** One argument as trace_probe prints it: name=value. */
export function fetchArg(ctx: FetchContext, arg: ProbeArg): string {
  try {
    return `${arg.name}=${argText(ctx, arg)}`
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
