// probekit run -p: kernel probes defined in tracefs kprobe_events syntax,
// armed with @probekit/kprobes, each hit printed as an ftrace line. The
// definitions of user probes (uprobe_events syntax, a PATH in the probe
// point) are parsed here too and armed by uprobe-events.ts.

import {
  fetchArg,
  type Kernel,
  type KprobeDefinition,
  type ProbeDefinition,
  ProbeSyntaxError,
  type PtRegsFrame,
  parseProbeDefinition,
  traceLine,
} from '@probekit/kernel'
import { type Kprobe, Kprobes, type Kretprobe } from '@probekit/kprobes'
import { CliError } from './cli-error.js'

/** The group of an event defined without one, as tracefs names it (kprobe_events, uprobe_events). */
const DEFAULT_GROUPS = new Set(['kprobes', 'uprobes'])

const REASONS: Record<number, string> = {
  [-2]: 'no such kernel symbol',
  [-22]: 'this address cannot be probed (outside kernel text, blacklisted, or an instruction kprobes refuse)',
  [-84]: 'not on an instruction boundary',
  [-17]: 'a probe of this kind is already there',
}

/**
 * Parse every definition first, so a typo stops the run before anything
 * starts. A second event of a name in its group is refused as tracefs
 * refuses it (EEXIST).
 */
export function parseDefinitions(lines: readonly string[]): ProbeDefinition[] {
  const events = new Set<string>()
  return lines.map((line) => {
    let d: ReturnType<typeof parseProbeDefinition>
    try {
      d = parseProbeDefinition(line)
    } catch (e) {
      if (e instanceof ProbeSyntaxError)
        throw new CliError(`bad probe definition '${line}': ${e.message} (column ${e.position + 1})`)
      throw e
    }
    if (d.kind === '-') throw new CliError(`'${line}': deleting an event makes no sense on the command line`)
    const name = DEFAULT_GROUPS.has(d.group) ? d.event : `${d.group}/${d.event}`
    if (events.has(`${d.group}/${d.event}`))
      throw new CliError(`-p '${line}': event ${name} already exists (EEXIST)`)
    events.add(`${d.group}/${d.event}`)
    return d
  })
}

/** What armProbes placed: the kprobes instance and each return probe by event (for its nmissed). */
export interface ArmedProbes {
  kprobes: Kprobes
  returnProbes: Map<string, Kretprobe>
}

/** Arm the kernel probes on a booted kernel; every hit calls emit(line). */
export function armProbes(
  kernel: Kernel,
  defs: readonly KprobeDefinition[],
  emit: (line: string) => void,
): ArmedProbes {
  const kprobes = new Kprobes(kernel)
  const returnProbes = new Map<string, Kretprobe>()
  for (const d of defs) {
    const place =
      'address' in d.target
        ? { addr: Number(BigInt.asIntN(64, d.target.address)) }
        : { symbol_name: d.target.symbol, offset: d.target.offset }
    const record = (regs: PtRegsFrame, where: string) => {
      const cpu = kernel.machine.cpus[kprobes.smp_processor_id()]
      const task = kernel.current(cpu)
      const ctx = { kernel, regs, task }
      emit(
        traceLine({
          comm: task.comm,
          pid: task.pid,
          cpu: cpu.id,
          nanoseconds: kernel.machine.cycles(cpu.id),
          event: d.event,
          where,
          args: d.args.map((a) => fetchArg(ctx, a)),
        }),
      )
    }
    let ret: number
    if (d.kind === 'p') {
      const kp: Kprobe = {
        ...place,
        pre_handler: (_p, regs) => {
          // The trap leaves ip after the int3: report the probed address.
          record(regs, kernel.kallsyms.format(regs.get('ip') - 1))
          return 0
        },
      }
      ret = kprobes.register_kprobe(kp)
    } else {
      const fn = 'symbol_name' in place ? place.symbol_name : ''
      const rp: Kretprobe = {
        kp: { ...place },
        maxactive: d.maxactive,
        handler: (ri, regs) => {
          record(regs, `${kernel.kallsyms.format(ri.ret_addr)} <- ${fn}`)
          return 0
        },
      }
      ret = kprobes.register_kretprobe(rp)
      returnProbes.set(d.event, rp)
    }
    if (ret !== 0) {
      const what =
        'address' in d.target ? `0x${d.target.address.toString(16)}` : `${d.target.symbol}+${d.target.offset}`
      throw new CliError(`cannot place probe ${d.event} at ${what}: ${REASONS[ret] ?? `error ${ret}`}`)
    }
  }
  return { kprobes, returnProbes }
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
