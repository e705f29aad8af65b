// probekit run -p: kernel probes defined in tracefs kprobe_events syntax,
// armed with @probekit/kprobes, each hit printed as an ftrace line. The
// definitions of user probes (uprobe_events syntax, a PATH in the probe
// point) are parsed here too and armed by uprobe-events.ts.

import { readFileSync } from 'node:fs'
import {
  EEXIST,
  EINVAL,
  ENOENT,
  entryArgNumbers,
  errnoName,
  type FetchContext,
  formatProbeDefinition,
  functionArgument,
  imageKallsyms,
  type Kallsyms,
  type Kernel,
  type KprobeDefinition,
  kallsymsSizeOffset,
  PROBE_ERRORS,
  type ProbeDefinition,
  ProbeSyntaxError,
  type PtRegsFrame,
  parseElf,
  parseProbeDefinition,
} from '@probekit/kernel'
import { EILSEQ, type Kprobe, Kprobes, type Kretprobe, recoverInstruction } from '@probekit/kprobes'
import { tryDecode } from '@probekit/x86-emu'
import { CliError } from './cli-error.js'
import type { EventFilters } from './event-filters.js'
import { readGuestImage } from './guest-image.js'
import { formatHit, type Hit, type HitFormat, hitPasses } from './hit.js'

/** The group of an event defined without one, as tracefs names it (kprobe_events, uprobe_events). */
const DEFAULT_GROUPS = new Set(['kprobes', 'uprobes'])

/** register_kprobe's failures, as trace_kprobe_create_internal logs them (and why, for the errno). */
const REASONS: Record<number, string> = {
  [-ENOENT]: `${PROBE_ERRORS.BAD_PROBE_ADDR} (ENOENT)`,
  [-EINVAL]: `${PROBE_ERRORS.FAIL_REG_PROBE} (EINVAL: outside kernel text, blacklisted, or an instruction kprobes refuse)`,
  [-EILSEQ]: `${PROBE_ERRORS.BAD_INSN_BNDRY} (EILSEQ)`,
  [-EEXIST]: `${PROBE_ERRORS.FAIL_REG_PROBE} (EEXIST: a probe of this kind is already there)`,
}

/** The line each parsed definition came from, so arming can read it again with the kernel's symbols. */
const SOURCE = new WeakMap<ProbeDefinition, string>()

/** A definition tracefs would refuse: its error_log text, the column of its caret, and what it names. */
function badDefinition(line: string, e: ProbeSyntaxError): CliError {
  const why = e.detail ? `: ${e.detail}${e.errno !== EINVAL ? ` (${errnoName(e.errno)})` : ''}` : ''
  return new CliError(`bad probe definition '${line}': ${e.message} (column ${e.position + 1})${why}`)
}

function parseLine(line: string, kallsyms?: Kallsyms): ReturnType<typeof parseProbeDefinition> {
  try {
    return parseProbeDefinition(line, { kallsyms })
  } catch (e) {
    if (e instanceof ProbeSyntaxError) throw badDefinition(line, e)
    throw e
  }
}

let guestKallsyms: Kallsyms | undefined

/** The guest kernel's symbols (read from its image once). */
export function guestKernelSymbols(): Kallsyms {
  guestKallsyms ??= imageKallsyms(parseElf(readGuestImage()))
  return guestKallsyms
}

/**
 * Parse every definition first, so a typo stops the run before anything
 * starts, with the guest kernel's symbols (or the ones given) for the checks
 * tracefs makes through kallsyms. A second event of a name in its group is
 * refused as tracefs refuses it (EEXIST).
 */
export function parseDefinitions(
  lines: readonly string[],
  kallsyms?: Kallsyms,
  /** Where each line came from, FILE:LINE for a -P file's (undefined: a -p), to prefix its errors. */
  origins?: readonly (string | undefined)[],
): ProbeDefinition[] {
  const events = new Set<string>()
  if (!kallsyms && lines.length > 0) kallsyms = guestKernelSymbols()
  return lines.map((line, i) => {
    const origin = origins?.[i]
    const at = (message: string) => (origin === undefined ? message : `${origin}: ${message}`)
    let d: ReturnType<typeof parseProbeDefinition>
    try {
      d = parseLine(line, kallsyms)
    } catch (e) {
      if (e instanceof CliError) throw new CliError(at(e.message), e.exitCode)
      throw e
    }
    if (d.kind === '-')
      throw new CliError(at(`'${line}': deleting an event makes no sense on the command line`))
    const name = DEFAULT_GROUPS.has(d.group) ? d.event : `${d.group}/${d.event}`
    if (events.has(`${d.group}/${d.event}`))
      throw new CliError(`${origin ?? '-p'} '${line}': event ${name} already exists (EEXIST)`)
    events.add(`${d.group}/${d.event}`)
    SOURCE.set(d, line)
    return d
  })
}

/**
 * -P FILE: the probe definitions of a file, one per line, as tracefs reads
 * kprobe_events (trace_parse_run_command): a '#' starts a comment to the end
 * of the line, blank lines are skipped. Each line comes with its FILE:LINE.
 */
export function readProbeFile(file: string): { line: string; origin: string }[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new CliError(
      `-P ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot read it (${code})`}`,
    )
  }
  const out: { line: string; origin: string }[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const hash = raw.indexOf('#')
    const line = (hash < 0 ? raw : raw.slice(0, hash)).trim()
    if (line !== '') out.push({ line, origin: `${file}:${i + 1}` })
  })
  return out
}

/** What armProbes placed: the kprobes instance and each return probe by event (for its nmissed). */
export interface ArmedProbes {
  kprobes: Kprobes
  returnProbes: Map<string, Kretprobe>
  /** Per GRP/EVENT: the hits (filtered out or not), and the misses as kprobe_profile counts them (nmissed). */
  profile: Map<string, { hits: number; misses: () => number }>
}

/** An event's key in a profile: GRP/EVENT (unique in a run, as tracefs has it). */
export const eventKey = (d: ProbeDefinition) => `${d.group}/${d.event}`

const hex = (n: number) => `0x${BigInt.asUintN(64, BigInt(n)).toString(16)}`

/** can_probe's walk: decoding from the function's start, is addr where an instruction starts? */
function onInstructionBoundary(kernel: Kernel, kprobes: Kprobes, start: number, addr: number): boolean {
  let a = start
  while (a < addr) {
    const insn = tryDecode(
      recoverInstruction(kernel, a, (x) => kprobes.get_kprobe(x)),
      a,
    )
    if (insn instanceof Error) return false
    a += insn.length
  }
  return a === addr
}

/**
 * Arm the kernel probes on a booted kernel; every hit calls emit(line). Each
 * definition is read again with the kernel's symbols, so what tracefs refuses
 * through kallsyms (an unknown or ambiguous symbol, a return probe off a
 * function entry, $argN off one, an unknown @SYM) is refused here, and the
 * probe point is judged as register_kprobe judges it: SYM+OFFS is an address,
 * past SYM's end it is the next function's (a function entry if it is that
 * function's first byte), and in the alignment padding after a function's
 * last instruction it is accepted on an instruction boundary and never fires.
 * A hit its event's filter (-f) does not match is counted, not written.
 */
export function armProbes(
  kernel: Kernel,
  defs: readonly KprobeDefinition[],
  emit: (line: string) => void,
  format: HitFormat = 'ftrace',
  filters?: EventFilters,
): ArmedProbes {
  const kprobes = new Kprobes(kernel)
  const returnProbes = new Map<string, Kretprobe>()
  const profile: ArmedProbes['profile'] = new Map()
  const ks = kernel.kallsyms
  const log = (text: string) => kernel.printk.log(kernel.jiffies, text)
  for (const parsed of defs) {
    const line = SOURCE.get(parsed) ?? formatProbeDefinition(parsed)
    const d = parseLine(line, ks) as KprobeDefinition
    const t = d.target
    const what = 'address' in t ? hex(Number(BigInt.asIntN(64, t.address))) : `${t.symbol}+${t.offset}`
    const fail = (reason: string): never => {
      throw new CliError(`cannot place probe ${d.event} at ${what}: ${reason}`)
    }
    // A module's symbol waits for the module to load (trace_kprobe_module_exist); this kernel has none.
    if ('symbol' in t && t.module !== undefined) {
      log('trace_kprobe: This probe might be able to register after target module is loaded. Continue.')
      continue
    }
    const addr =
      'address' in t ? Number(BigInt.asIntN(64, t.address)) : (ks.lookupName(t.symbol) as number) + t.offset
    const at = kallsymsSizeOffset(ks, addr)
    if (!at) return fail(`${PROBE_ERRORS.BAD_PROBE_ADDR} (ENOENT: ${hex(addr)} is outside the kernel image)`)
    const fn = at.symbol
    // register_kretprobe: kprobe_on_func_entry (a symbol's was checked while parsing).
    if (d.kind === 'r' && at.offset !== 0)
      return fail(`${PROBE_ERRORS.FAIL_REG_PROBE} (EINVAL: ${what} is not a function entry)`)
    if ((fn.type === 't' || fn.type === 'T') && fn.size > 0 && at.offset >= fn.size) {
      // Past fn's last instruction, in the padding kallsyms counts as fn's: can_probe decodes
      // through it, and nothing ever executes there.
      if (kprobes.within_kprobe_blacklist(fn.address))
        return fail(`${PROBE_ERRORS.FAIL_REG_PROBE} (EINVAL: ${fn.name} is blacklisted)`)
      if (!onInstructionBoundary(kernel, kprobes, fn.address, addr))
        return fail(`${PROBE_ERRORS.BAD_INSN_BNDRY} (EILSEQ)`)
      log(
        `probekit: ${d.event} at ${what} is past ${fn.name}'s last instruction (${fn.name} is ${hex(fn.size)} bytes), in its alignment padding: placed as Linux places it, it never fires`,
      )
      continue
    }
    const place = 'address' in t ? { addr } : { symbol_name: t.symbol, offset: t.offset }
    const stats = { hits: 0, misses: () => 0 }
    const filter = filters?.get(eventKey(d))
    const record = (
      regs: PtRegsFrame,
      where: string,
      probed: number,
      entryArgs?: ReadonlyMap<number, bigint>,
      returnAddress?: number,
    ) => {
      const cpu = kernel.machine.cpus[kprobes.smp_processor_id()]
      const task = kernel.current(cpu)
      const ctx: FetchContext = { kernel, regs, task, entryArgs }
      // kprobe_dispatcher counts every hit (nhit); the filter decides at commit.
      stats.hits++
      const hit: Hit = {
        comm: task.comm,
        pid: task.pid,
        cpu: cpu.id,
        nanoseconds: kernel.machine.cycles(cpu.id),
        group: d.group,
        event: d.event,
        probe: d.kind === 'r' ? 'r' : 'p',
        address: probed,
        symbol: ks.format(probed),
        returnAddress,
        where,
        ctx,
        args: d.args,
      }
      if (hitPasses(filter, hit)) emit(formatHit(hit, format))
    }
    let ret: number
    if (d.kind === 'p') {
      const kp: Kprobe = {
        ...place,
        pre_handler: (_p, regs) => {
          // The trap leaves ip after the int3: report the probed address.
          const ip = regs.get('ip') - 1
          record(regs, ks.format(ip), ip)
          return 0
        },
      }
      ret = kprobes.register_kprobe(kp)
      stats.misses = () => kp.nmissed ?? 0
    } else {
      // print_kretprobe_event: the function by name (%ps of the probed address).
      const fnName = fn.name
      // $argN at a return probe: saved by an entry handler (store_trace_entry_data), 8 bytes each.
      const saved = entryArgNumbers(d.args)
      const rp: Kretprobe = {
        kp: { ...place },
        maxactive: d.maxactive,
        data_size: 8 * saved.length,
        entry_handler:
          saved.length === 0
            ? null
            : (ri, regs) => {
                const cpu = kernel.machine.cpus[kprobes.smp_processor_id()]
                const ctx = { kernel, regs, task: kernel.current(cpu) }
                const view = new DataView(ri.data.buffer, ri.data.byteOffset, ri.data.byteLength)
                saved.forEach((n, i) => {
                  view.setBigUint64(8 * i, functionArgument(ctx, n), true)
                })
                return 0
              },
        handler: (ri, regs) => {
          const view = new DataView(ri.data.buffer, ri.data.byteOffset, ri.data.byteLength)
          const entryArgs = new Map(saved.map((n, i) => [n, view.getBigUint64(8 * i, true)]))
          record(regs, `${ks.format(ri.ret_addr)} <- ${fnName}`, addr, entryArgs, ri.ret_addr)
          return 0
        },
      }
      ret = kprobes.register_kretprobe(rp)
      if (ret === 0) returnProbes.set(d.event, rp)
      // kprobe_profile: a return probe's misses are its kretprobe's and its kprobe's.
      stats.misses = () => (rp.nmissed ?? 0) + (rp.kp.nmissed ?? 0)
    }
    if (ret !== 0) return fail(REASONS[ret] ?? `${PROBE_ERRORS.FAIL_REG_PROBE} (${errnoName(ret)})`)
    profile.set(eventKey(d), stats)
  }
  return { kprobes, returnProbes, profile }
}

/**
 * Return probes that missed hits (no free kretprobe instance: a function that
 * sleeps, or recursion, needs more than the default MAXACTIVE, NR_CPUS), one
 * line each, so no lost hit goes unsaid.
 */
export function missedReturns(armed: ArmedProbes): string[] {
  const out: string[] = []
  for (const [event, rp] of armed.returnProbes) {
    const n = rp.nmissed ?? 0
    if (n > 0)
      out.push(
        `${event}: ${n} return${n === 1 ? '' : 's'} missed (maxactive ${rp.maxactive}: more calls were in flight at once; raise it, e.g. r16:${event})`,
      )
  }
  return out
}
