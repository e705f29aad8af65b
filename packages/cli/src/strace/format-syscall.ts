// A system call as the line strace -f prints: name(args) padded so "= "
// starts at column 40, then the result ("= 3", "= 0x7f...", "= -1 ENOENT
// (No such file or directory)", "= ?"). Calls can also be printed in the two
// halves strace uses when other tasks' lines come in between:
// 'read(3, <unfinished ...>' and '<... read resumed>"abc", 256) = 3'.

import { errnoMessage, errnoName, syscallName } from '@probekit/kernel'
import type { EntryView, ExitView, Later, Part } from './decoder.js'
import { DECODERS } from './decoders.js'
import type { StraceMemory } from './memory.js'
import { hex, signedDecimal } from './numbers.js'
import { syscallArgCount } from './syscall-args.js'

/** strace's default -a: the column where "= " goes. */
export const RESULT_COLUMN = 40

// Kernel-internal codes a traced call can end with when a signal interrupts
// it; strace prints these as "= ? ERESTARTSYS (...)".
const RESTART_CODES: Record<number, [string, string]> = {
  512: ['ERESTARTSYS', 'To be restarted if SA_RESTART is set'],
  513: ['ERESTARTNOINTR', 'To be restarted'],
  514: ['ERESTARTNOHAND', 'To be restarted if no handler'],
  516: ['ERESTART_RESTARTBLOCK', 'Interrupted by signal'],
}

/** Options for where the line starts. */
export interface StraceLineOptions {
  /**
   * Characters already on the line before the call (e.g. 12 for strace -f's
   * "[pid  1234] "), so the result still lands at column 40.
   */
  column?: number
}

/** A call seen at entry, to be finished, resumed or cut short. */
export interface StraceCall {
  /** What strace prints when the call starts: 'read(3, ' or 'exit_group(0'. */
  readonly entry: string
  /** The whole line once the call returned with ret (rax). */
  finish(ret: number, mem: StraceMemory, options?: StraceLineOptions): string
  /** The entry line when another task's output follows: 'wait4(7245,  <unfinished ...>'. */
  interrupted(): string
  /** The return line after an interruption: '<... wait4 resumed>[{WIFEXITED(s) ...}], 0, NULL) = 7245'. */
  resumed(ret: number, mem: StraceMemory, options?: StraceLineOptions): string
  /**
   * The line for a call that never returns (exit_group) or whose task died in
   * it: 'exit_group(0) = ?'; after interrupted(), with resumed: true,
   * '<... exit_group resumed>) = ?'.
   */
  unfinished(options?: StraceLineOptions & { resumed?: boolean }): string
}

/** ")" then padding to the result column, then "= result" (strace's tabto). */
function withResult(left: string, result: string, column = 0): string {
  const text = `${left} `
  const pad = Math.max(0, RESULT_COLUMN - column - text.length)
  return `${text}${' '.repeat(pad)}= ${result}`
}

function isError(ret: number): boolean {
  return ret < 0 && ret >= -4095
}

function resultText(x: ExitView, success?: (x: ExitView) => string): string {
  if (x.failed) {
    const errno = -x.ret
    const restart = RESTART_CODES[errno]
    if (restart) return `? ${restart[0]} (${restart[1]})`
    return `-1 ${errnoName(errno)} (${errnoMessage(errno)})`
  }
  return success ? success(x) : signedDecimal(x.ret)
}

/** strace's name for nr: the table's, or syscall_0x1f4 for a number with none. */
function callName(nr: number): string {
  const name = syscallName(nr)
  return name.startsWith('syscall_') ? `syscall_${hex(nr)}` : name
}

/** Without a decoder: each argument in hex, as many as the call takes (6 if unknown). */
function rawParts(nr: number, args: readonly number[]): Part[] {
  const count = syscallArgCount(nr) ?? 6
  return args.slice(0, count).map((v) => hex(v))
}

/**
 * A decoder that trips over what a program passed (a struct shorter than it reads) is a bug of ours;
 * it costs that call its decoding (fallback), never the traced run.
 */
function decoded<T>(decode: () => T, fallback: () => T): T {
  try {
    return decode()
  } catch (e) {
    if (e instanceof RangeError || e instanceof TypeError) return fallback()
    throw e
  }
}

function isLater(part: Part): part is Later {
  return typeof part !== 'string'
}

/** Decode the arguments known at entry; the rest waits for finish/resumed. */
export function startSyscall(nr: number, args: readonly number[], mem: StraceMemory): StraceCall {
  const name = callName(nr)
  const decoder = DECODERS[name]
  const view: EntryView = { args, mem }
  const parts = decoder
    ? decoded(
        () => decoder.args(view),
        () => rawParts(nr, args),
      )
    : rawParts(nr, args)
  const split = parts.findIndex(isLater)
  const entryParts = (split < 0 ? parts : parts.slice(0, split)) as string[]
  const rest = split < 0 ? [] : parts.slice(split)
  // strace prints the separator before an exit-time argument on entry.
  const trailer = rest.length > 0 && entryParts.length > 0 && !(rest[0] as Later).glued ? ', ' : ''
  const entry = `${name}(${entryParts.join(', ')}${trailer}`

  const exitText = (ret: number, exitMem: StraceMemory): { args: string; result: string } => {
    const x: ExitView = { args, mem: exitMem, ret, failed: isError(ret) }
    let text = ''
    rest.forEach((part, i) => {
      const glued = isLater(part) && part.glued
      if (i > 0 && !glued) text += ', '
      text += isLater(part)
        ? decoded(
            () => part.exit(x),
            () => '?',
          )
        : part
    })
    return {
      args: text,
      result: decoded(
        () => resultText(x, decoder?.ret),
        () => signedDecimal(ret),
      ),
    }
  }

  return {
    entry,
    finish(ret, exitMem, options) {
      const { args: tail, result } = exitText(ret, exitMem)
      return withResult(`${entry}${tail})`, result, options?.column)
    },
    interrupted() {
      return `${entry} <unfinished ...>`
    },
    resumed(ret, exitMem, options) {
      const { args: tail, result } = exitText(ret, exitMem)
      return withResult(`<... ${name} resumed>${tail})`, result, options?.column)
    },
    unfinished(options) {
      const start = options?.resumed ? `<... ${name} resumed>` : entry
      const left = rest.length > 0 ? `${start} <unfinished ...>)` : `${start})`
      return withResult(left, '?', options?.column)
    },
  }
}

/**
 * One finished call as strace -f prints it, e.g.
 * 'openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3'. args are the six
 * argument registers (rdi rsi rdx r10 r8 r9) as the kernel gives them, ret is
 * rax after the call, mem is read after the call. For execve, whose arguments
 * are gone once it succeeds, use startSyscall at entry instead.
 */
export function formatSyscall(
  nr: number,
  args: readonly number[],
  ret: number,
  mem: StraceMemory,
  options?: StraceLineOptions,
): string {
  return startSyscall(nr, args, mem).finish(ret, mem, options)
}

/** A call that never returns (exit, exit_group) or was running when its task died: 'exit_group(0) = ?'. */
export function formatUnfinishedSyscall(
  nr: number,
  args: readonly number[],
  mem: StraceMemory,
  options?: StraceLineOptions,
): string {
  return startSyscall(nr, args, mem).unfinished(options)
}
