// Dynamic probe definitions in the syntax of tracefs kprobe_events
// (Documentation/trace/kprobetrace.rst of Linux 6.x), parsed into a
// definition the probe layers arm, and printed back in a normalised form.
// The rules and the error messages are kernel/trace/trace_kprobe.c's and
// trace_probe.c's (trace_kprobe_create_internal, traceprobe_parse_probe_arg),
// for a kernel without BTF (CONFIG_PROBE_EVENTS_BTF_ARGS=n) on x86-64:
//
//   p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|MEMADDR [FETCHARGS]
//   r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0] [FETCHARGS]
//   p[:[GRP/][EVENT]] [MOD:]SYM[+0]%return [FETCHARGS]      (= r)
//   -:[GRP/]EVENT
//
// FETCHARGS are [NAME=]FETCHARG[:TYPE], FETCHARG one of %REG, @ADDR,
// @SYM[+|-OFFS], $stackN, $stack, $argN, $retval, $comm, \IMM, \"STRING",
// +|-[u]OFFS(FETCHARG); TYPE one of u8..u64, s8..s64, x8..x64, char, string,
// ustring, symbol, symstr, b<bit-width>@<bit-offset>/<container-size>, and
// any of those but symstr as an array, TYPE[N] (N <= 64).
//
// Every error is a ProbeSyntaxError with tracefs's error_log text and its
// caret: the offset in the definition where trace_probe_log_err points.
// Given the kernel's symbols (options.kallsyms) the parser also makes the
// checks tracefs makes with kallsyms while it parses (the probed symbol
// exists and is unique, a return probe is on a function entry, $argN only at
// an entry or exit) and the ones registration makes of @SYM (it must exist:
// -ENOENT); without them SYM+0 counts as a function entry and anything else
// as not, and symbols are left for whoever arms the probe.
//
// User-space probes in the syntax of uprobe_events
// (Documentation/trace/uprobetracer.rst), told apart as tracefs does by a
// '/' in the probe point (PATH must be absolute or relative: ./prog):
//
//   p[:[GRP/]EVENT] PATH:OFFSET[%return] [FETCHARGS]
//   r[:[GRP/]EVENT] PATH:OFFSET [FETCHARGS]
//
// OFFSET is a file offset (as kstrtoul reads it: 0x hex, 0 octal, decimal).
// Beyond tracefs, PATH:SYMBOL[+OFFS] names the place as perf probe -x does;
// whoever arms the probe resolves it through the file's symbol table. Their
// FETCHARGS read user memory only: @SYM, $argN, :symbol and :symstr are
// refused, @+FILE_OFFSET (memory at that offset of the probed file, where the
// process has it mapped) is theirs, and the u of +u0(...) changes nothing.

import { E2BIG, EINVAL, ENOENT, EOPNOTSUPP } from '../errno.js'
import type { Kallsyms, KernelSymbol } from '../kallsyms.js'

export type FetchArg =
  | { kind: 'reg'; reg: string }
  | { kind: 'mem'; address: bigint }
  | { kind: 'symbol'; symbol: string; offset: number }
  | { kind: 'stack'; index: number }
  | { kind: 'stackpointer' }
  /** $argN, N from 1: the Nth argument by the x86-64 calling convention (at a return probe, as it was at entry). */
  | { kind: 'arg'; index: number }
  | { kind: 'retval' }
  | { kind: 'comm' }
  | { kind: 'imm'; value: bigint }
  /** \"STRING": an immediate string. */
  | { kind: 'immstr'; value: string }
  | { kind: 'deref'; offset: number; user: boolean; inner: FetchArg }
  /** Uprobes' @+FILE_OFFSET: memory at that offset of the probed file, where the hitting process maps it. */
  | { kind: 'fileoffset'; offset: number }

export type FetchType =
  | 'u8'
  | 'u16'
  | 'u32'
  | 'u64'
  | 's8'
  | 's16'
  | 's32'
  | 's64'
  | 'x8'
  | 'x16'
  | 'x32'
  | 'x64'
  /** A byte shown as '%c'. */
  | 'char'
  /** A pointer-sized value shown as %pS: sym+0xoff/0xsize. */
  | 'symbol'
  /** A NUL-terminated string in kernel memory (user memory for a uprobe, or after +u). */
  | 'string'
  /** A NUL-terminated string in user memory. */
  | 'ustring'
  /** The value as %pS prints it, recorded as a string. */
  | 'symstr'

/** `b<width>@<offset>/<container>`: bits offset..offset+width-1 of a container-bit value. */
export interface Bitfield {
  width: number
  offset: number
  container: 8 | 16 | 32 | 64
}

export interface ProbeArg {
  name: string
  fetch: FetchArg
  /** The type stored; a bitfield's is its container's (u8..u64). */
  type: FetchType
  bitfield?: Bitfield
  /** TYPE[N]: N elements (for string, N pointers to strings). */
  count?: number
}

/** A kernel probe point: a symbol with offset, or an absolute address. */
export type KprobeTarget = { symbol: string; offset: number; module?: string } | { address: bigint }

/**
 * A user probe point: a file offset in the file at path, or a symbol of that
 * file (its .symtab, else .dynsym) plus offset bytes.
 */
export type UprobeTarget = { path: string; offset: number } | { path: string; symbol: string; offset: number }

export interface ProbeDefinition<Target extends KprobeTarget | UprobeTarget = KprobeTarget | UprobeTarget> {
  kind: 'p' | 'r'
  group: string
  event: string
  /** Probe point: kernel (symbol or address) or user (path with a file offset or a symbol). */
  target: Target
  /** Kernel return probes: instances to preallocate (0 = the default; always 0 for uprobes). */
  maxactive: number
  args: ProbeArg[]
}

export type KprobeDefinition = ProbeDefinition<KprobeTarget>
export type UprobeDefinition = ProbeDefinition<UprobeTarget>

/** Is this a uprobe_events definition (a probe point in a file)? */
export function isUprobeDefinition(d: ProbeDefinition): d is UprobeDefinition {
  return 'path' in d.target
}

export interface ProbeDeletion {
  kind: '-'
  group: string
  event: string
}

/** tracefs's error_log texts (kernel/trace/trace_probe.h, ERRORS), by their TP_ERR_ names. */
export const PROBE_ERRORS = {
  BAD_UPROBE_OFFS: 'Invalid uprobe offset',
  BAD_MAXACT_TYPE: 'Maxactive is only for function exit',
  BAD_MAXACT: 'Invalid maxactive number',
  MAXACT_TOO_BIG: 'Maxactive is too big',
  BAD_PROBE_ADDR: 'Invalid probed address or symbol',
  NON_UNIQ_SYMBOL: 'The symbol is not unique',
  BAD_RETPROBE: 'Retprobe address must be an function entry',
  BAD_ADDR_SUFFIX: 'Invalid probed address suffix',
  NO_GROUP_NAME: 'Group name is not specified',
  GROUP_TOO_LONG: 'Group name is too long',
  BAD_GROUP_NAME: 'Group name must follow the same rules as C identifiers',
  NO_EVENT_NAME: 'Event name is not specified',
  EVENT_TOO_LONG: 'Event name is too long',
  BAD_EVENT_NAME: 'Event name must follow the same rules as C identifiers',
  RETVAL_ON_PROBE: '$retval is not available on probe',
  BAD_STACK_NUM: 'Invalid stack number',
  BAD_ARG_NUM: 'Invalid argument number',
  BAD_VAR: 'Invalid $-valiable specified',
  BAD_REG_NAME: 'Invalid register name',
  BAD_MEM_ADDR: 'Invalid memory address',
  BAD_IMM: 'Invalid immediate value',
  IMMSTR_NO_CLOSE: `String is not closed with '"'`,
  FILE_ON_KPROBE: 'File offset is not available with kprobe',
  BAD_FILE_OFFS: 'Invalid file offset value',
  SYM_ON_UPROBE: 'Symbol is not available with uprobe',
  TOO_MANY_OPS: 'Dereference is too much nested',
  DEREF_NEED_BRACE: 'Dereference needs a brace',
  BAD_DEREF_OFFS: 'Invalid dereference offset',
  DEREF_OPEN_BRACE: 'Dereference brace is not closed',
  COMM_CANT_DEREF: '$comm can not be dereferenced',
  BAD_FETCH_ARG: 'Invalid fetch argument',
  ARRAY_NO_CLOSE: 'Array is not closed',
  BAD_ARRAY_SUFFIX: 'Array has wrong suffix',
  BAD_ARRAY_NUM: 'Invalid array size',
  ARRAY_TOO_BIG: 'Array number is too big',
  BAD_TYPE: 'Unknown type is specified',
  BAD_STRING: 'String accepts only memory argument',
  BAD_SYMSTRING: "Symbol String doesn't accept data/userdata",
  BAD_BITFIELD: 'Invalid bitfield',
  ARG_NAME_TOO_LONG: 'Argument name is too long',
  NO_ARG_NAME: 'Argument name is not specified',
  BAD_ARG_NAME: 'Argument name must follow the same rules as C identifiers',
  USED_ARG_NAME: 'This argument name is already used',
  ARG_TOO_LONG: 'Argument expression is too long',
  NO_ARG_BODY: 'No argument expression',
  BAD_INSN_BNDRY: 'Probe point is not an instruction boundary',
  FAIL_REG_PROBE: 'Failed to register probe event',
  NOSUP_BTFARG: 'BTF is not available or not supported',
  NOFENTRY_ARGS: '$arg* can be used only on function entry or exit',
  DOUBLE_ARGS: '$arg* can be used only once in the parameters',
  NEED_STRING_TYPE: '$comm and immediate-string only accepts string type',
  TOO_MANY_ARGS: 'Too many arguments are specified',
} as const

export type ProbeErrorCode = keyof typeof PROBE_ERRORS

export class ProbeSyntaxError extends Error {
  /** The errno the write to kprobe_events fails with (positive: 22 is EINVAL). */
  readonly errno: number
  /** What the error_log text does not say: the name at fault, for a message. */
  readonly detail?: string

  constructor(
    message: string,
    /** Offset in the definition where the problem is (tracefs's caret). */
    readonly position: number,
    extra: { errno?: number; detail?: string } = {},
  ) {
    super(message)
    this.name = 'ProbeSyntaxError'
    this.errno = extra.errno ?? EINVAL
    if (extra.detail !== undefined) this.detail = extra.detail
  }
}

function fail(code: ProbeErrorCode, at: number, extra?: { errno?: number; detail?: string }): never {
  throw new ProbeSyntaxError(PROBE_ERRORS[code], at, extra)
}

/** x86-64 register names as pt_regs spells them (kprobetrace accepts these, without the leading 'r'). */
export const FETCH_REGISTERS = [
  'ax',
  'bx',
  'cx',
  'dx',
  'si',
  'di',
  'bp',
  'sp',
  'ip',
  'flags',
  'cs',
  'ss',
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
  'orig_ax',
] as const

const TYPES: readonly FetchType[] = [
  'u8',
  'u16',
  'u32',
  'u64',
  's8',
  's16',
  's32',
  's64',
  'x8',
  'x16',
  'x32',
  'x64',
  'char',
  'symbol',
  'string',
  'ustring',
  'symstr',
]

// trace_probe.h and trace_kprobe.c limits.
const MAX_TRACE_ARGS = 128
const MAX_ARGSTR_LEN = 63
const MAX_ARRAY_LEN = 64
const MAX_ARG_NAME_LEN = 32
const MAX_EVENT_NAME_LEN = 64
const KRETPROBE_MAXACTIVE_MAX = 4096
/** FETCH_INSN_MAX: fetch + deref*N + store + modify + end. */
const FETCH_INSN_MAX = 16
/** PARAM_MAX_STACK: THREAD_SIZE (16 KiB on x86-64) / sizeof(long). */
const PARAM_MAX_STACK = 2048n
const UINT_MAX = 0xffffffffn
const ULONG_MAX = (1n << 64n) - 1n
const LONG_MAX = (1n << 63n) - 1n
/** Field names every event has (trace_probe.c's reserved_field_names). */
const RESERVED_FIELDS = [
  'common_type',
  'common_flags',
  'common_preempt_count',
  'common_pid',
  'common_tgid',
  '__probe_ip',
  '__probe_ret_ip',
  '__probe_func',
]

/** is_good_name: event and argument names are C identifiers. */
function isGoodName(s: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s)
}

/** is_good_system_name: a group may also have '-' (module names). */
function isGoodSystemName(s: string): boolean {
  return /^[A-Za-z_-][A-Za-z0-9_-]*$/.test(s)
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'

const DIGITS = '0123456789abcdef'

/** _parse_integer_fixup_radix then _parse_integer: the value and where the digits end. */
function parseInteger(s: string, from: number, base: 0 | 10): { value: bigint; end: number } {
  let i = from
  let radix: number = base
  if (base === 0) {
    if (s[i] === '0') {
      if ((s[i + 1] === 'x' || s[i + 1] === 'X') && DIGITS.includes((s[i + 2] ?? '').toLowerCase())) {
        radix = 16
        i += 2
      } else radix = 8
    } else radix = 10
  }
  let value = 0n
  for (; i < s.length; i++) {
    const d = DIGITS.indexOf(s[i].toLowerCase())
    if (d < 0 || d >= radix) break
    value = value * BigInt(radix) + BigInt(d)
  }
  return { value, end: i }
}

/** kstrtoull(s, base): all of s a number (a leading '+' allowed), below 2^64; or null. */
function kstrtoull(s: string, base: 0 | 10): bigint | null {
  const from = s.startsWith('+') ? 1 : 0
  const { value, end } = parseInteger(s, from, base)
  if (end === from || end !== s.length || value > ULONG_MAX) return null
  return value
}

/** kstrtoul(s, 0). */
function kstrtoul(s: string): bigint | null {
  return kstrtoull(s, 0)
}

/** kstrtouint(s, 0). */
function kstrtouint(s: string): number | null {
  const v = kstrtoull(s, 0)
  return v === null || v > UINT_MAX ? null : Number(v)
}

/** kstrtol(s, 0): a signed long ('-' or '+' first allowed). */
function kstrtol(s: string): bigint | null {
  if (s.startsWith('-')) {
    const v = kstrtoull(s.slice(1), 0)
    return v === null || v > LONG_MAX + 1n ? null : -v
  }
  const v = kstrtoull(s, 0)
  return v === null || v > LONG_MAX ? null : v
}

/** simple_strtoul(s + from, &end, 0): as many digits as there are (none: 0 and end = from). */
function simpleStrtoul(s: string, from: number): { value: bigint; end: number } {
  return parseInteger(s, from, 0)
}

/** str_to_immediate: \IMM as unsigned, or signed with a leading - or +. */
function strToImmediate(s: string): bigint | null {
  if (isDigit(s[0])) return kstrtoul(s)
  if (s[0] === '-') return kstrtol(s)
  if (s[0] === '+') return kstrtol(s.slice(1))
  return null
}

/** A file offset must be exact as a JavaScript number. */
function safeOffset(v: bigint, at: number): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ProbeSyntaxError(`offset 0x${v.toString(16)} is too large`, at)
  return Number(v)
}

/**
 * kallsyms_lookup_size_offset as Linux answers it: the symbol at or below addr,
 * whose extent runs to the next symbol (so a function's alignment padding is
 * its own), and the offset in it; null outside the kernel image (-ENOENT).
 */
export function kallsymsSizeOffset(
  kallsyms: Kallsyms,
  addr: number,
): { symbol: KernelSymbol; offset: number; size: number } | null {
  const all = kallsyms.all()
  if (all.length === 0) return null
  const lo = kallsyms.lookupName('_text') ?? all[0].address
  const last = all[all.length - 1]
  const hi = kallsyms.lookupName('_end') ?? last.address + Math.max(last.size, 1)
  if (addr < lo || addr >= hi) return null
  let l = 0
  let h = all.length - 1
  let best = -1
  while (l <= h) {
    const m = (l + h) >> 1
    if (all[m].address <= addr) {
      best = m
      l = m + 1
    } else h = m - 1
  }
  if (best < 0) return null
  const start = all[best].address
  // The first of the symbols at that address (get_symbol_pos), and the next distinct address.
  let first = best
  while (first > 0 && all[first - 1].address === start) first--
  let next = best + 1
  while (next < all.length && all[next].address === start) next++
  const end = next < all.length ? all[next].address : hi
  return { symbol: all[first], offset: addr - start, size: end - start }
}

/** How many kernel symbols have this name (validate_probe_symbol's count). */
function countSymbols(kallsyms: Kallsyms, name: string): number {
  let n = 0
  for (const s of kallsyms.all()) if (s.name === name) n++
  return n
}

/**
 * kprobe_on_func_entry(NULL, SYM, OFFS): 0 when SYM+OFFS is a function entry
 * (x86-64 without IBT: offset 0 in the symbol kallsyms finds there, which is
 * the next function's when OFFS runs past SYM), -EINVAL when it is not,
 * -ENOENT when there is no such place.
 */
export function kprobeOnFuncEntry(kallsyms: Kallsyms, symbol: string, offset: number): 0 | -2 | -22 {
  const base = kallsyms.lookupName(symbol)
  if (base === undefined) return -ENOENT as -2
  const at = kallsymsSizeOffset(kallsyms, base + offset)
  if (!at) return -ENOENT as -2
  return at.offset === 0 ? 0 : (-EINVAL as -22)
}

export interface ProbeParseOptions {
  /**
   * The kernel's symbols. With them the parser checks what tracefs checks
   * through kallsyms: the probed symbol exists (once), a return probe is on a
   * function entry, $argN is at an entry or exit, every `@SYM` exists.
   */
  kallsyms?: Kallsyms
}

/** TPARG_FL_*: what kind of place the fetch arguments are parsed for. */
interface ParseFlags {
  kernel: boolean
  /** A return probe (TPARG_FL_RETURN). */
  ret: boolean
  /** A kprobe at a function entry (TPARG_FL_FENTRY). */
  fentry: boolean
}

/** tparg_is_function_entry: (flags & LOC_MASK) == KERNEL | FENTRY. */
const isFunctionEntry = (f: ParseFlags) => f.kernel && f.fentry && !f.ret
/** tparg_is_function_return: (flags & LOC_MASK) == KERNEL | RETURN. */
const isFunctionReturn = (f: ParseFlags) => f.kernel && f.ret

/** The fetch_insn a fetch argument leaves last, as traceprobe_parse_probe_arg_body sees it. */
type FetchOp =
  | 'REG'
  | 'STACK'
  | 'STACKP'
  | 'RETVAL'
  | 'IMM'
  | 'COMM'
  | 'ARG'
  | 'EDATA'
  | 'FOFFS'
  | 'DATA'
  | 'DEREF'
  | 'UDEREF'

interface ParsedFetch {
  fetch: FetchArg
  op: FetchOp
  /** Index of that fetch_insn in the code array. */
  code: number
}

/** traceprobe_parse_context: where errors point (moved along as Linux moves it), and the flags. */
interface ArgContext {
  offset: number
  flags: ParseFlags
  /** @SYM names met, for the registration-time lookup. */
  symbols: { symbol: string; text: string }[]
  /** Errors registration would find (traceprobe_update_arg), reported after parsing as tracefs does. */
  registerErrors: ProbeSyntaxError[]
  placeAt: number
}

/** parse_probe_vars: $retval, $stack, $stackN, $comm, $argN. */
function parseVar(arg: string, ctx: ArgContext): ParsedFetch {
  const v = arg.slice(1)
  const at = ctx.offset
  // Without BTF, anything starting with "retval" is $retval (str_has_prefix).
  if (v.startsWith('retval')) {
    if (!ctx.flags.ret) fail('RETVAL_ON_PROBE', at)
    return { fetch: { kind: 'retval' }, op: 'RETVAL', code: 0 }
  }
  if (v.startsWith('stack')) {
    const rest = v.slice(5)
    if (rest === '') return { fetch: { kind: 'stackpointer' }, op: 'STACKP', code: 0 }
    if (isDigit(rest[0])) {
      const n = kstrtoull(rest, 10)
      if (n === null) fail('BAD_VAR', at)
      if (ctx.flags.kernel && n > PARAM_MAX_STACK) fail('BAD_STACK_NUM', at)
      return { fetch: { kind: 'stack', index: Number(n) }, op: 'STACK', code: 0 }
    }
    fail('BAD_VAR', at)
  }
  if (v === 'comm' || v === 'COMM') return { fetch: { kind: 'comm' }, op: 'COMM', code: 0 }
  if (v.startsWith('arg')) {
    const n = kstrtoull(v.slice(3), 10)
    if (n === null) fail('BAD_VAR', at)
    if (n === 0n || n > PARAM_MAX_STACK) fail('BAD_ARG_NUM', at)
    const fetch: FetchArg = { kind: 'arg', index: Number(n) }
    if (isFunctionEntry(ctx.flags)) return { fetch, op: 'ARG', code: 0 }
    // At a return probe the entry handler saves it (FETCH_OP_EDATA).
    if (isFunctionReturn(ctx.flags)) return { fetch, op: 'EDATA', code: 0 }
    fail('NOFENTRY_ARGS', at)
  }
  fail('BAD_VAR', at)
}

/** parse_probe_arg: one FETCHARG (without its type), recursively for dereferences. */
function parseFetch(arg: string, ctx: ArgContext): ParsedFetch {
  switch (arg[0]) {
    case '$':
      return parseVar(arg, ctx)
    case '%': {
      const reg = arg.slice(1)
      if (!(FETCH_REGISTERS as readonly string[]).includes(reg)) fail('BAD_REG_NAME', ctx.offset)
      return { fetch: { kind: 'reg', reg }, op: 'REG', code: 0 }
    }
    case '@': {
      // Memory, a file offset or a symbol: then a dereference (FETCH_OP_DEREF).
      if (isDigit(arg[1])) {
        const address = kstrtoul(arg.slice(1))
        if (address === null) fail('BAD_MEM_ADDR', ctx.offset)
        return { fetch: { kind: 'mem', address }, op: 'DEREF', code: 1 }
      }
      if (arg[1] === '+') {
        if (ctx.flags.kernel) fail('FILE_ON_KPROBE', ctx.offset)
        const offset = kstrtol(arg.slice(2))
        if (offset === null) fail('BAD_FILE_OFFS', ctx.offset)
        return {
          fetch: { kind: 'fileoffset', offset: safeOffset(offset, ctx.offset + 2) },
          op: 'DEREF',
          code: 1,
        }
      }
      if (!ctx.flags.kernel) fail('SYM_ON_UPROBE', ctx.offset)
      // Kept as written; registration looks it up (traceprobe_update_arg: split, then kallsyms).
      const text = arg.slice(1)
      const cut = text.search(/[+-]/)
      const symbol = cut < 0 ? text : text.slice(0, cut)
      const offset = cut < 0 ? 0n : kstrtol(text.slice(cut))
      if (offset === null)
        ctx.registerErrors.push(
          new ProbeSyntaxError(PROBE_ERRORS.FAIL_REG_PROBE, ctx.placeAt, {
            detail: `bad offset in @${text}`,
          }),
        )
      ctx.symbols.push({ symbol, text })
      return { fetch: { kind: 'symbol', symbol, offset: Number(offset ?? 0n) }, op: 'DEREF', code: 2 }
    }
    case '+':
    case '-': {
      let s = arg
      const user = s[1] === 'u'
      // Linux drops the 'u' without moving its error offset: from here on it points one byte early.
      if (user) s = s[0] + s.slice(2)
      if (s[0] === '+') s = s.slice(1)
      const open = s.indexOf('(')
      if (open < 0) fail('DEREF_NEED_BRACE', ctx.offset)
      const offset = kstrtol(s.slice(0, open))
      if (offset === null) fail('BAD_DEREF_OFFS', ctx.offset)
      ctx.offset += open + 1 + (s[0] !== '-' ? 1 : 0)
      let body = s.slice(open + 1)
      const close = body.lastIndexOf(')')
      if (close < 0) fail('DEREF_OPEN_BRACE', ctx.offset + body.length)
      body = body.slice(0, close)
      const innerAt = ctx.offset
      const inner = parseFetch(body, ctx)
      ctx.offset = innerAt
      if (inner.op === 'COMM' || inner.op === 'DATA') fail('COMM_CANT_DEREF', ctx.offset)
      const code = inner.code + 1
      if (code >= FETCH_INSN_MAX - 1) fail('TOO_MANY_OPS', ctx.offset)
      return {
        fetch: { kind: 'deref', offset: Number(offset), user, inner: inner.fetch },
        op: user ? 'UDEREF' : 'DEREF',
        code,
      }
    }
    case '\\': {
      if (arg[1] === '"') {
        const str = arg.slice(2)
        // An empty \" is closed by its own quote (Linux reads the byte before).
        if (str.length > 0 && !str.endsWith('"')) fail('IMMSTR_NO_CLOSE', ctx.offset + 2 + str.length)
        return { fetch: { kind: 'immstr', value: str.slice(0, -1) }, op: 'DATA', code: 0 }
      }
      const value = strToImmediate(arg.slice(1))
      if (value === null) fail('BAD_IMM', ctx.offset + 1)
      return { fetch: { kind: 'imm', value }, op: 'IMM', code: 0 }
    }
    default:
      // A name would be a BTF argument: this kernel has no BTF.
      if (/^[A-Za-z_]/.test(arg)) fail('NOSUP_BTFARG', ctx.offset, { errno: EOPNOTSUPP })
      fail('BAD_FETCH_ARG', ctx.offset)
  }
}

/** find_fetch_type: a type name (or the default), a bitfield by its container; null if unknown. */
function findFetchType(
  t: string | null,
  user: boolean,
): { type: FetchType; container?: 8 | 16 | 32 | 64 } | null {
  if (t !== null && user && (t === 'symbol' || t === 'symstr')) return null
  if (t === null) return { type: 'x64' }
  if (t[0] === 'b') {
    const slash = t.indexOf('/')
    if (slash < 0) return null
    const bits = kstrtoul(t.slice(slash + 1))
    if (bits !== 8n && bits !== 16n && bits !== 32n && bits !== 64n) return null
    const container = Number(bits) as 8 | 16 | 32 | 64
    return { type: `u${container}` as FetchType, container }
  }
  return (TYPES as readonly string[]).includes(t) ? { type: t as FetchType } : null
}

/** __parse_bitfield_probe_arg's syntax: `b<width>@<offset>/...`, fitting in the container. */
function parseBitfield(t: string, container: 8 | 16 | 32 | 64): Bitfield | null {
  const w = simpleStrtoul(t, 1)
  if (w.value === 0n || t[w.end] !== '@') return null
  const o = simpleStrtoul(t, w.end + 1)
  if (o.end === w.end + 1 || t[o.end] !== '/') return null
  if (w.value + o.value > BigInt(container)) return null
  return { width: Number(w.value), offset: Number(o.value), container }
}

/**
 * traceprobe_parse_probe_arg: [NAME=]FETCHARG[:TYPE] at `at` in the definition,
 * the index-th argument; names are the ones taken so far.
 */
function parseArg(text: string, at: number, index: number, names: Set<string>, ctx: ArgContext): ProbeArg {
  const eq = text.indexOf('=')
  let name: string
  let body: string
  if (eq >= 0) {
    if (eq > MAX_ARG_NAME_LEN) fail('ARG_NAME_TOO_LONG', at)
    if (eq === 0) fail('NO_ARG_NAME', at)
    name = text.slice(0, eq)
    body = text.slice(eq + 1)
  } else {
    name = `arg${index + 1}`
    body = text
  }
  if (!isGoodName(name)) fail('BAD_ARG_NAME', at)
  if (RESERVED_FIELDS.includes(name) || names.has(name)) fail('USED_ARG_NAME', at)
  ctx.offset = at + (eq >= 0 ? eq + 1 : 0)
  if (body.length > MAX_ARGSTR_LEN) fail('ARG_TOO_LONG', ctx.offset, { errno: E2BIG })
  if (body.length === 0) fail('NO_ARG_BODY', ctx.offset)

  // parse_probe_arg_type: the type follows the first ':', an array count its '['.
  const colon = body.indexOf(':')
  const argText = colon >= 0 ? body.slice(0, colon) : body
  let typeText = colon >= 0 ? body.slice(colon + 1) : null
  let count = 0
  if (typeText !== null) {
    const lb = typeText.indexOf('[')
    if (lb >= 0) {
      const numAt = colon + 1 + lb + 1
      const rest = typeText.slice(lb + 1)
      const rb = rest.indexOf(']')
      if (rb < 0) fail('ARRAY_NO_CLOSE', ctx.offset + numAt + rest.length)
      if (rb + 1 < rest.length) fail('BAD_ARRAY_SUFFIX', ctx.offset + numAt + rb + 1)
      const n = kstrtouint(rest.slice(0, rb))
      if (n === null || n === 0) fail('BAD_ARRAY_NUM', ctx.offset + numAt)
      if (n > MAX_ARRAY_LEN) fail('ARRAY_TOO_BIG', ctx.offset + numAt)
      count = n
      typeText = typeText.slice(0, lb)
    }
  }
  const typeOffs = colon >= 0 ? colon + 1 : 0
  let found: ReturnType<typeof findFetchType>
  if (argText === '$comm' || argText === '$COMM' || argText.startsWith('\\"')) {
    if (count > 0 || (typeText !== null && typeText !== 'string'))
      fail('NEED_STRING_TYPE', ctx.offset + typeOffs)
    found = { type: 'string' }
  } else found = findFetchType(typeText, !ctx.flags.kernel)
  if (!found) fail('BAD_TYPE', ctx.offset + typeOffs)
  const type = found.type

  const parsed = parseFetch(argText, ctx)
  const { op } = parsed
  let code = parsed.code
  // finalize_fetch_insn, whose errors point at ctx->offset + the type's offset, wherever a
  // dereference left ctx->offset.
  const typeAt = ctx.offset + typeOffs
  let store: 'RAW' | 'MEM' | 'UMEM' | 'STRING' | 'USTRING' | 'SYMSTR'
  if (type === 'string' || type === 'ustring' || type === 'symstr') {
    if (type === 'symstr') {
      if (!['REG', 'STACK', 'RETVAL', 'ARG', 'DEREF'].includes(op)) fail('BAD_SYMSTRING', typeAt)
    } else if (!['DEREF', 'UDEREF', 'IMM', 'COMM', 'DATA'].includes(op)) fail('BAD_STRING', typeAt)
    // The string is read at the address a last dereference would load from, unless that load
    // is kept: symstr wants the value, IMM/COMM/DATA are addresses, arrays are of pointers.
    let replaces = true
    if (type === 'symstr' || op === 'IMM' || op === 'COMM' || op === 'DATA' || count > 0) {
      code++
      if (code >= FETCH_INSN_MAX - 1) fail('TOO_MANY_OPS', ctx.offset)
      replaces = false
    }
    store =
      type === 'ustring' || (replaces && op === 'UDEREF')
        ? 'USTRING'
        : type === 'symstr'
          ? 'SYMSTR'
          : 'STRING'
  } else if (op === 'DEREF') store = 'MEM'
  else if (op === 'UDEREF') store = 'UMEM'
  else {
    code++
    if (code >= FETCH_INSN_MAX - 1) fail('TOO_MANY_OPS', ctx.offset, { errno: E2BIG })
    store = 'RAW'
  }
  let bitfield: Bitfield | undefined
  if (typeText?.[0] === 'b' && found.container) {
    const bf = parseBitfield(typeText, found.container)
    code++
    if (!bf || code >= FETCH_INSN_MAX - 1) fail('BAD_BITFIELD', typeAt)
    bitfield = bf
  }
  if (count > 0) {
    if (store !== 'MEM' && store !== 'STRING' && store !== 'USTRING') fail('BAD_STRING', typeAt)
    code++
    if (code >= FETCH_INSN_MAX - 1) fail('TOO_MANY_OPS', ctx.offset, { errno: E2BIG })
  }
  const out: ProbeArg = { name, fetch: parsed.fetch, type }
  if (bitfield) out.bitfield = bitfield
  if (count > 0) out.count = count
  return out
}

/** A uprobe's probe point, as trace_uprobe.c reads it, and the event name tracefs would give it. */
function parseUprobePlace(
  text: string,
  at: number,
  kind: 'p' | 'r',
): { target: UprobeTarget; kind: 'p' | 'r'; defaultEvent: string } {
  const colon = text.lastIndexOf(':')
  if (colon < 0 || colon < text.indexOf('/'))
    throw new ProbeSyntaxError(
      `bad probe point '${text}': a uprobe is PATH:OFFSET or PATH:SYMBOL[+OFFS] (no ':' after the path)`,
      at + text.length,
    )
  const path = text.slice(0, colon)
  let spec = text.slice(colon + 1)
  const specAt = at + colon + 1
  const paren = spec.indexOf('(')
  if (paren >= 0)
    throw new ProbeSyntaxError(
      'reference counter offsets (PATH:OFFSET(REF_CTR_OFFSET), for SDT semaphores) are not supported',
      specAt + paren,
    )
  const pct = spec.indexOf('%')
  if (pct >= 0) {
    if (spec.slice(pct) !== '%return') fail('BAD_ADDR_SUFFIX', specAt + pct)
    kind = 'r'
    spec = spec.slice(0, pct)
  }
  // kbasename, cut at the first '.', '-' or '_' (as trace_uprobe.c names events), kept to a valid name.
  const tail = (path.slice(path.lastIndexOf('/') + 1).split(/[.\-_]/)[0] ?? '').replace(/[^A-Za-z0-9_]/g, '_')
  if (isDigit(spec[0])) {
    const v = kstrtoul(spec)
    if (v === null) fail('BAD_UPROBE_OFFS', specAt)
    const offset = safeOffset(v, specAt)
    return { target: { path, offset }, kind, defaultEvent: `${kind}_${tail}_0x${offset.toString(16)}` }
  }
  const m = /^([A-Za-z_.$][A-Za-z0-9_.$]*)(?:\+([0-9][0-9a-fA-FxX]*))?$/.exec(spec)
  if (!m)
    throw new ProbeSyntaxError(
      `bad probe point '${text}' (expected PATH:OFFSET or PATH:SYMBOL[+OFFS])`,
      spec === '' ? specAt : at,
    )
  let offset = 0
  if (m[2] !== undefined) {
    const v = kstrtoul(m[2])
    if (v === null) throw new ProbeSyntaxError(`bad offset '${m[2]}'`, specAt + m[1].length + 1)
    offset = safeOffset(v, specAt + m[1].length + 1)
  }
  if (kind === 'r' && offset !== 0) fail('BAD_RETPROBE', at)
  return {
    target: { path, symbol: m[1], offset },
    kind,
    defaultEvent: `${kind}_${tail}_${m[1].replace(/[.$]/g, '_')}_${offset}`,
  }
}

/**
 * A kprobe's probe point, as trace_kprobe_create_internal reads it: an address
 * (kstrtoul), else [MOD:]SYM[+|-OFFS][%return] checked against kallsyms.
 */
function parseKprobePlace(
  text: string,
  at: number,
  isReturn: boolean,
  options: ProbeParseOptions,
): { target: KprobeTarget; isReturn: boolean; flags: ParseFlags; symbolText?: string } {
  const address = kstrtoul(text)
  // An address: no checks here, and (as in Linux) no TPARG_FL_RETURN either.
  if (address !== null)
    return { target: { address }, isReturn, flags: { kernel: true, ret: false, fentry: false } }
  let spec = text
  const pct = spec.indexOf('%')
  if (pct >= 0) {
    if (spec.slice(pct) !== '%return') fail('BAD_ADDR_SUFFIX', at + pct)
    spec = spec.slice(0, pct)
    isReturn = true
  }
  // traceprobe_split_symbol_offset: the offset starts at the first '+' or '-'.
  const cut = spec.search(/[+-]/)
  const name = cut < 0 ? spec : spec.slice(0, cut)
  const offset = cut < 0 ? 0n : kstrtol(spec.slice(cut))
  if (offset === null || offset < 0n || offset > UINT_MAX) fail('BAD_PROBE_ADDR', at)
  const colon = name.indexOf(':')
  const module = colon >= 0 ? name.slice(0, colon) : undefined
  const symbol = colon >= 0 ? name.slice(colon + 1) : name
  const off = Number(offset)
  const k = options.kallsyms
  // validate_probe_symbol: a module that is not loaded (there are none here) defers the check.
  if (module === undefined) {
    if (k) {
      const n = countSymbols(k, symbol)
      if (n > 1) fail('NON_UNIQ_SYMBOL', at)
      if (n === 0) fail('BAD_PROBE_ADDR', at, { detail: `no kernel symbol '${symbol}'` })
    } else if (!/^[A-Za-z_.$][A-Za-z0-9_.$]*$/.test(symbol)) fail('BAD_PROBE_ADDR', at)
  }
  const onEntry =
    module !== undefined ? -ENOENT : k ? kprobeOnFuncEntry(k, symbol, off) : off === 0 ? 0 : -EINVAL
  if (isReturn && onEntry === -EINVAL) fail('BAD_RETPROBE', at)
  const target: KprobeTarget =
    module !== undefined ? { symbol, offset: off, module } : { symbol, offset: off }
  return { target, isReturn, flags: { kernel: true, ret: isReturn, fentry: onEntry === 0 && !isReturn } }
}

/** Split on whitespace, keeping each token's offset. */
function tokens(line: string): { text: string; at: number }[] {
  const out: { text: string; at: number }[] = []
  const re = /\S+/g
  for (let m = re.exec(line); m; m = re.exec(line)) out.push({ text: m[0], at: m.index })
  return out
}

/** traceprobe_parse_event_name: [GROUP/][EVENT] or [GROUP.][EVENT], errors at `at` (the group's or event's start). */
function parseEventName(spec: string, at: number): { group?: string; event?: string } {
  let slash = spec.indexOf('/')
  if (slash < 0) slash = spec.indexOf('.')
  let event = spec
  let group: string | undefined
  if (slash >= 0) {
    if (slash === 0) fail('NO_GROUP_NAME', at)
    if (slash + 1 > MAX_EVENT_NAME_LEN) fail('GROUP_TOO_LONG', at)
    group = spec.slice(0, slash)
    if (!isGoodSystemName(group)) fail('BAD_GROUP_NAME', at)
    event = spec.slice(slash + 1)
    at += slash + 1
  }
  if (event.length === 0) {
    if (slash >= 0) return { group }
    fail('NO_EVENT_NAME', at)
  }
  if (event.length >= MAX_EVENT_NAME_LEN) fail('EVENT_TOO_LONG', at)
  if (!isGoodName(event)) fail('BAD_EVENT_NAME', at)
  return { group, event }
}

/** sanitize_event_name, and the snprintf into MAX_EVENT_NAME_LEN. */
function defaultEventName(name: string): string {
  return name.replace(/[:.*]/g, '_').slice(0, MAX_EVENT_NAME_LEN - 1)
}

function parseDeletion(head: { text: string; at: number }, rest: number | undefined): ProbeDeletion {
  const spec = head.text.slice(2)
  if (head.text[1] !== ':' || spec === '')
    throw new ProbeSyntaxError("'-' needs an event name: -:[GRP/]EVENT", head.at)
  if (rest !== undefined) throw new ProbeSyntaxError('nothing may follow a deletion', rest)
  const slash = spec.indexOf('/')
  const group = slash >= 0 ? spec.slice(0, slash) : undefined
  const event = slash >= 0 ? spec.slice(slash + 1) : spec
  if (group !== undefined && !isGoodSystemName(group)) fail('BAD_GROUP_NAME', head.at + 2)
  if (!isGoodName(event)) fail('BAD_EVENT_NAME', head.at + 2 + (slash + 1))
  return { kind: '-', group: group ?? 'kprobes', event }
}

/**
 * Parse one kprobe_events or uprobe_events line (throws ProbeSyntaxError with
 * tracefs's message and where its caret would be).
 */
export function parseProbeDefinition(
  line: string,
  options: ProbeParseOptions = {},
): ProbeDefinition | ProbeDeletion {
  const toks = tokens(line)
  if (toks.length === 0) throw new ProbeSyntaxError('empty probe definition', 0)
  const head = toks[0]
  const c = head.text[0]
  if (c === '-') return parseDeletion(head, toks[1]?.at)
  if (c !== 'p' && c !== 'r')
    throw new ProbeSyntaxError(`a definition starts with 'p', 'r' or '-' (got '${head.text}')`, head.at)
  let isReturn = c === 'r'
  const place = toks[1]
  if (!place) throw new ProbeSyntaxError('missing the probe point: SYM[+OFFS] or an address', line.length)
  // Whatever is between p/r and ':' that is not MAXACTIVE is ignored, as Linux ignores it.
  const colon = head.text.indexOf(':', 1)
  const eventSpec = colon >= 0 ? head.text.slice(colon + 1) : null
  let maxactive = 0
  if (isDigit(head.text[1])) {
    if (!isReturn) fail('BAD_MAXACT_TYPE', head.at + 1)
    const digits = head.text.slice(1, colon >= 0 ? colon : undefined)
    if (digits.length > MAX_EVENT_NAME_LEN - 1) fail('BAD_MAXACT', head.at + 1)
    const n = kstrtouint(digits)
    if (n === null || n === 0) fail('BAD_MAXACT', head.at + 1)
    if (n > KRETPROBE_MAXACTIVE_MAX) fail('MAXACT_TOO_BIG', head.at + 1)
    maxactive = n
  }
  let target: ProbeDefinition['target']
  let defaultEvent: string
  let flags: ParseFlags
  // A '/' makes it a uprobe, as in tracefs (kernel symbols have none).
  const user = place.text.includes('/')
  if (user) {
    if (maxactive !== 0)
      throw new ProbeSyntaxError('MAXACTIVE is only for kernel return probes (kretprobes)', head.at + 1)
    const u = parseUprobePlace(place.text, place.at, isReturn ? 'r' : 'p')
    target = u.target
    isReturn = u.kind === 'r'
    defaultEvent = u.defaultEvent
    flags = { kernel: false, ret: isReturn, fentry: false }
  } else {
    const k = parseKprobePlace(place.text, place.at, isReturn, options)
    target = k.target
    isReturn = k.isReturn
    flags = k.flags
    const kc = isReturn ? 'r' : 'p'
    defaultEvent =
      'address' in target
        ? `${kc}_0x${target.address.toString(16)}`
        : defaultEventName(
            `${kc}_${target.module ? `${target.module}:` : ''}${target.symbol}_${target.offset}`,
          )
  }
  const names = eventSpec === null ? {} : parseEventName(eventSpec, head.at + colon + 1)

  const argToks = toks.slice(2)
  if (!user) {
    // argv_has_var_arg: every bare $arg... first ($arg* would need BTF).
    let varArgs = -1
    let last = -1
    for (const [i, t] of argToks.entries()) {
      if (!t.text.startsWith('$arg')) continue
      last = i
      if (!isFunctionEntry(flags) && !isFunctionReturn(flags)) fail('NOFENTRY_ARGS', t.at)
      if (isDigit(t.text[4])) continue
      if (t.text[4] !== '*') fail('BAD_VAR', t.at)
      if (varArgs >= 0) fail('DOUBLE_ARGS', t.at)
      varArgs = i
    }
    if (varArgs >= 0) fail('NOSUP_BTFARG', argToks[last].at, { errno: EOPNOTSUPP })
  }
  if (argToks.length > MAX_TRACE_ARGS) fail('TOO_MANY_ARGS', argToks[0].at, { errno: E2BIG })
  const ctx: ArgContext = { offset: 0, flags, symbols: [], registerErrors: [], placeAt: place.at }
  const taken = new Set<string>()
  const args: ProbeArg[] = []
  for (const [i, t] of argToks.entries()) {
    const a = parseArg(t.text, t.at, i, taken, ctx)
    taken.add(a.name)
    args.push(a)
  }
  // Registration (traceprobe_update_arg): @SYM must be a symbol; its errors point at the probe point.
  if (ctx.registerErrors.length > 0) throw ctx.registerErrors[0]
  if (options.kallsyms)
    for (const s of ctx.symbols)
      if (options.kallsyms.lookupName(s.symbol) === undefined)
        fail('BAD_PROBE_ADDR', place.at, {
          errno: ENOENT,
          detail: `no kernel symbol '${s.symbol}' for @${s.text}`,
        })
  return {
    kind: isReturn ? 'r' : 'p',
    group: names.group ?? (user ? 'uprobes' : 'kprobes'),
    event: names.event ?? defaultEvent,
    target,
    maxactive,
    args,
  }
}

/** Every $argN a definition's arguments use (a return probe saves them at entry), in order. */
export function entryArgNumbers(args: readonly ProbeArg[]): number[] {
  const out = new Set<number>()
  const walk = (f: FetchArg): void => {
    if (f.kind === 'arg') out.add(f.index)
    else if (f.kind === 'deref') walk(f.inner)
  }
  for (const a of args) walk(a.fetch)
  return [...out].sort((a, b) => a - b)
}

function fetchText(f: FetchArg): string {
  switch (f.kind) {
    case 'reg':
      return `%${f.reg}`
    case 'mem':
      return `@0x${f.address.toString(16)}`
    case 'symbol':
      return `@${f.symbol}${f.offset > 0 ? `+${f.offset}` : f.offset < 0 ? `${f.offset}` : ''}`
    case 'stack':
      return `$stack${f.index}`
    case 'stackpointer':
      return '$stack'
    case 'arg':
      return `$arg${f.index}`
    case 'retval':
      return '$retval'
    case 'comm':
      return '$comm'
    case 'imm':
      return `\\${f.value}`
    case 'immstr':
      return `\\"${f.value}"`
    case 'deref':
      return `${f.offset < 0 ? '-' : '+'}${f.user ? 'u' : ''}${Math.abs(f.offset)}(${fetchText(f.inner)})`
    case 'fileoffset':
      return `@+0x${f.offset.toString(16)}`
  }
}

/** The type as written: `TYPE`, `b<w>@<o>/<c>`, with `[N]` for an array. */
export function typeText(a: ProbeArg): string {
  const t = a.bitfield ? `b${a.bitfield.width}@${a.bitfield.offset}/${a.bitfield.container}` : a.type
  return a.count ? `${t}[${a.count}]` : t
}

/** The normalised form, as reading kprobe_events back prints it. */
export function formatProbeDefinition(d: ProbeDefinition): string {
  const place =
    'path' in d.target
      ? // uprobe_events prints the offset as 0x%016lx.
        `${d.target.path}:${'symbol' in d.target ? `${d.target.symbol}${d.target.offset ? `+${d.target.offset}` : ''}` : `0x${d.target.offset.toString(16).padStart(16, '0')}`}`
      : 'address' in d.target
        ? `0x${d.target.address.toString(16).padStart(16, '0')}`
        : `${d.target.module ? `${d.target.module}:` : ''}${d.target.symbol}${d.target.offset ? `+${d.target.offset}` : ''}`
  const head = d.kind === 'r' ? `r${d.maxactive || ''}` : 'p'
  const args = d.args.map((a) => ` ${a.name}=${fetchText(a.fetch)}:${typeText(a)}`).join('')
  return `${head}:${d.group}/${d.event} ${place}${args}`
}
