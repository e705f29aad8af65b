// One playground run, as `probekit run -p ... -- PROGRAM` does it: the
// guest kernel booted on one vCPU with the program at /bin/NAME, the
// definitions parsed and placed by the CLI's own code (so every mistake
// gets the CLI's one-line error), the kernel probes jump-optimized or kept
// int3 probes, the program run within an instruction budget, and what it
// printed, every hit's ftrace line and the probed functions' listings
// returned.

import { CliError } from '../../../packages/cli/src/cli-error.js'
import { type ArmedProbes, armProbes, parseDefinitions } from '../../../packages/cli/src/probes.js'
import { armUprobes, resolveUprobe } from '../../../packages/cli/src/uprobe-events.js'
import {
  ElfError,
  ExecError,
  isUprobeDefinition,
  Kernel,
  type KprobeDefinition,
  oopsReports,
  signalName,
} from '../../../packages/kernel/src/index.js'
import { Optprobes } from '../../../packages/optprobes/src/index.js'
import { guestImage, programBytes } from './assets.js'
import { probedListings } from './listing.js'
import type { RunReport, RunRequest } from './protocol.js'

const MIB = 1024 * 1024
/** Trace lines kept (the count goes on past it): a probe on a hot function cannot fill the page's memory. */
const MAX_TRACE_LINES = 10_000

/** The definitions of the text box, as tracefs reads kprobe_events: '#' to the end of a line is a comment. */
export function definitionLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => (l.includes('#') ? l.slice(0, l.indexOf('#')) : l).trim())
    .filter((l) => l !== '')
}

/** A stream of guest output chunks, decoded as UTF-8 across chunk boundaries. */
function collector(): { write: (d: Uint8Array) => void; text: () => string } {
  const decoder = new TextDecoder()
  let text = ''
  return {
    write: (d) => {
      text += decoder.decode(d, { stream: true })
    },
    text: () => text + decoder.decode(),
  }
}

export async function playgroundRun(req: RunRequest): Promise<RunReport> {
  if (!Number.isSafeInteger(req.maxInstructions) || req.maxInstructions < 1)
    throw new CliError(`the instruction budget must be a whole number above 0 (got ${req.maxInstructions})`)
  const [image, program] = await Promise.all([guestImage(), programBytes(req.program)])
  const stdout = collector()
  const stderr = collector()
  const kernel = new Kernel({
    image,
    cpus: 1,
    memorySize: 64 * MIB,
    stdout: stdout.write,
    stderr: stderr.write,
  })
  const path = `/bin/${req.program}`
  kernel.vfs.writeFile(path, program)
  // Every definition parsed first (a typo stops the run before anything starts), with the guest's symbols.
  const defs = parseDefinitions(definitionLines(req.definitions), kernel.kallsyms)
  const kprobeDefs = defs.filter((d): d is KprobeDefinition => !isUprobeDefinition(d))
  const uprobes = defs.filter(isUprobeDefinition).map((d) => resolveUprobe(kernel, d, { cwd: '/' }))
  kernel.boot()

  const trace: string[] = []
  let hits = 0
  const emit = (line: string) => {
    if (hits++ < MAX_TRACE_LINES) trace.push(line)
  }
  let armed: ArmedProbes | null = null
  let optprobes: Optprobes | null = null
  if (kprobeDefs.length > 0) {
    armed = armProbes(kernel, kprobeDefs, emit)
    // CONFIG_OPTPROBES: each kernel probe is an int3 probe first, then a jump where it can be one.
    optprobes = new Optprobes(armed.kprobes)
    // The kprobe-optimizer's delayed work, run now rather than OPTIMIZE_DELAY jiffies into the run.
    if (req.optimize) optprobes.wait_for_kprobe_optimizer()
    else kernel.sysctls.set('debug.kprobes_optimization', '0\n')
  }
  // uprobe_register on the files' inodes: the program's own text gets the breakpoints as spawn maps it.
  if (uprobes.length > 0) armUprobes(kernel, uprobes, emit)
  try {
    kernel.spawn(path, [path, ...req.args], ['HOME=/', 'PATH=/bin'], { cwd: '/' })
  } catch (e) {
    if (e instanceof ExecError || e instanceof ElfError)
      throw new CliError(`${path}: cannot run it: ${e.message}`)
    throw e
  }
  const { result, exit } = kernel.run(req.maxInstructions)

  let status: string
  if (result.reason === 'oops')
    status = [`the kernel oopsed: ${result.detail}`, ...(oopsReports(kernel)[0] ?? [])].join('\n')
  else if (exit) status = exit.signal ? `killed by ${signalName(exit.signal)}` : `exit status ${exit.code}`
  else if (result.reason === 'budget')
    status = `stopped: ran past the instruction budget (${req.maxInstructions} instructions)`
  else status = `did not exit: ${result.detail}`
  if (hits > MAX_TRACE_LINES) trace.push(`... ${hits - MAX_TRACE_LINES} more hits not shown`)
  return {
    stdout: stdout.text(),
    stderr: stderr.text(),
    trace,
    status,
    instructions: result.instructions,
    listings: await probedListings(kernel, armed, optprobes, kprobeDefs, uprobes),
    kprobesList: armed ? armed.kprobes.debugfsList() : '',
  }
}
