// probekit run [--cpus N] [--memory SIZE] [--isolated] [--mount HOST[:GUEST]] -- PROGRAM [ARGS...]:
// run an x86-64 Linux executable (static or dynamically linked, or a #! script) on the emulated machine under the probekit
// kernel, with the host's stdio, and exit with the program's status.

import { openSync, statSync } from 'node:fs'
import { basename, posix, resolve } from 'node:path'
import { isatty } from 'node:tty'
import {
  checkExecutable,
  ElfError,
  ExecError,
  hasDeliverableSignal,
  isUprobeDefinition,
  Kernel,
  type KprobeDefinition,
  oopsReports,
  signalName,
  syscallName,
  type Task,
  ttyIsig,
} from '@probekit/kernel'
import { Optprobes } from '@probekit/optprobes'
import { CliError, EXIT_BUDGET, EXIT_INTERRUPTED, EXIT_OOPS } from '../cli-error.js'
import { parseEventFilters } from '../event-filters.js'
import { readGuestImage } from '../guest-image.js'
import type { HitFormat } from '../hit.js'
import { hostDirectory } from '../host-directory.js'
import { HostInterrupts } from '../host-interrupts.js'
import { HostStdin } from '../host-stdin.js'
import { describeWriteError, writeHost } from '../host-write.js'
import type { CliIo } from '../io.js'
import { applySysctls, detoursListing, parseSysctl } from '../optprobes-report.js'
import { parseSize } from '../parse-size.js'
import {
  type ArmedProbes,
  armProbes,
  eventKey,
  missedReturns,
  parseDefinitions,
  readProbeFile,
} from '../probes.js'
import { progressUnwanted, RunProgress } from '../progress.js'
import { readProgram } from '../read-program.js'
import { StraceEngine } from '../strace/strace-engine.js'
import { parseTraceQualifier } from '../strace/trace-filter.js'
import { type ArmedUprobes, armUprobes, type ResolvedUprobe, resolveUprobe } from '../uprobe-events.js'

export interface RunOptions {
  cpus: string
  /** HOST[:GUEST] directories shown read-only. */
  mount: string[]
  /** See only an empty root and the --mounts, not the host's files. */
  isolated?: boolean
  maxInstructions: string
  /** The guest's memory, e.g. 256M (see parseSize). */
  memory: string
  dmesg?: boolean
  /** Probe definitions: kernel (kprobe_events syntax) and user (uprobe_events syntax, PATH:OFFSET). */
  probe: string[]
  /** -f EVENT:FILTER: ftrace event filters, at most one per event. */
  filter?: string[]
  /** -P: files of probe definitions, one per line ('#' comments), after the -p ones. */
  probeFile?: string[]
  /** Where trace lines go (default: stderr). */
  trace?: string
  /** Print each event's hits and misses at the end, as kprobe_profile does. */
  stats?: boolean
  /** sysctl NAME=VALUE settings, applied once the probes are in place (debug.kprobes_optimization). */
  sysctl?: string[]
  /** Print debugfs kprobes/list at the end. */
  kprobesList?: boolean
  /** Print each kernel probe's detour buffer beside its patched bytes at the end. */
  detours?: boolean
  /** Trace system calls as strace -f does. */
  strace?: boolean
  /** Where strace lines go (default: stderr). */
  straceFile?: string
  /** strace's -e trace=... */
  straceExpr?: string
  /** Probe hits and strace lines as JSON objects. */
  json?: boolean
  /** tmpfs's size= for the in-memory file system (see parseSize); default half of --memory. */
  tmpfsSize?: string
  /** The progress line on an interactive stderr (--no-progress: false). */
  progress?: boolean
}

/** A decimal integer from 1 to max (no fractions, hex or exponents: 1.5, 0x100 and 1e400 are refused). */
function positiveInt(text: string, what: string, max: number): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    throw new CliError(`${what} must be a whole number from 1 to ${max} (got '${text}')`)
  return n
}

/** The guest kernel's NR_CPUS. */
const NR_CPUS = 16

/** --mount HOST[:GUEST]: a host directory, shown read-only at GUEST (default: the same path). */
function parseMount(spec: string): { host: string; guest: string; spec: string } {
  const i = spec.indexOf(':')
  const host = resolve(i < 0 ? spec : spec.slice(0, i))
  const guest = i < 0 ? host : posix.resolve('/', spec.slice(i + 1))
  return { host, guest, spec }
}

/** Where the program lives in the guest: its host path, resolved from the guest's root (cwd "/"), so argv[0] finds it again. */
function guestPath(program: string): string {
  return posix.resolve('/', program)
}

export function runCommand(program: string, args: readonly string[], options: RunOptions, io: CliIo): number {
  const cpus = positiveInt(options.cpus, '--cpus', NR_CPUS)
  const fromFiles = (options.probeFile ?? []).flatMap(readProbeFile)
  const probeDefs = parseDefinitions([...options.probe, ...fromFiles.map((l) => l.line)], undefined, [
    ...options.probe.map(() => undefined),
    ...fromFiles.map((l) => l.origin),
  ])
  const filters = parseEventFilters(options.filter ?? [], probeDefs)
  const sysctls = (options.sysctl ?? []).map(parseSysctl)
  const budget = positiveInt(options.maxInstructions, '--max-instructions', Number.MAX_SAFE_INTEGER)
  const memorySize = parseSize(options.memory ?? '256M', '--memory', 16 * MIB, 2048 * MIB)
  const tmpfsSize =
    options.tmpfsSize === undefined
      ? undefined
      : parseSize(options.tmpfsSize, '--tmpfs-size', 4 * KIB, 64 * 1024 * MIB)
  if (options.trace && probeDefs.length === 0)
    throw new CliError(`--trace ${options.trace}: there are no probes (-p) to trace`)
  const strace = options.strace || options.straceFile !== undefined || options.straceExpr !== undefined
  const only = options.straceExpr !== undefined ? parseTraceQualifier(options.straceExpr) : undefined
  if (options.json && !strace && probeDefs.length === 0)
    throw new CliError('--json goes with probes (-p, -P) or --strace: there is nothing to print as JSON')
  if (options.stats && probeDefs.length === 0)
    throw new CliError('--stats: there are no probes (-p, -P) to count')
  const mounts = options.mount.map(parseMount)
  for (const { host, spec } of mounts) {
    const isDir = statSync(host, { throwIfNoEntry: false })?.isDirectory()
    if (isDir !== true)
      throw new CliError(`--mount ${spec}: ${isDir === false ? 'not a directory' : 'no such directory'}`)
  }
  const bytes = readProgram(program)
  // A #! script is run by its interpreter (binfmt_script); anything else must be an x86-64 ELF executable.
  const script = bytes[0] === 0x23 && bytes[1] === 0x21
  if (!script) {
    try {
      checkExecutable(bytes)
    } catch (e) {
      if (e instanceof ElfError) throw new CliError(`${program}: ${e.message}`)
      throw e
    }
  }
  // Ctrl-C: the first is the console's ^C (SIGINT to the program's process group, which may catch
  // it); a second stops the run. Looked at from the guest's tick (and while a read waits for the
  // host's stdin), so an uninterrupted run is the same run whenever the host looks.
  const interrupts = HostInterrupts.fromEnv()
  let ctrlC = 0
  /** Did the host see a Ctrl-C since the last look? The first is SIGINT to the foreground group, a second stops the run. */
  const takeCtrlC = (): boolean => {
    const n = interrupts.poll()
    if (n === 0) return false
    if (ctrlC === 0) ttyIsig(kernel, SIGINT)
    ctrlC += n
    if (ctrlC > 1) kernel.machine.stop('interrupted')
    return true
  }
  const hostStdin = new HostStdin()
  // The progress line (progress.ts), made when the run starts; every write to a terminal goes
  // through toHost, which erases it first.
  let progress: RunProgress | null = null
  const terminals = new Set([1, 2].filter((fd) => isatty(fd)))
  const toHost = (fd: number, data: Uint8Array): number => {
    if (progress === null || !terminals.has(fd)) return writeHost(fd, data)
    progress.clear()
    const n = writeHost(fd, data)
    if (n > 0) progress.wrote(data.subarray(0, n))
    return n
  }
  const kernel: Kernel = new Kernel({
    image: readGuestImage(),
    cpus,
    memorySize,
    tmpfsSize,
    hostTick: () => {
      progress?.tick()
      takeCtrlC()
    },
    // The guest's write gets what the host's did: -EPIPE (and so SIGPIPE), -ENOSPC, ...
    stdout: (d) => toHost(1, d),
    stderr: (d) => toHost(2, d),
    // Like the host: a terminal when probekit's own stdout is one (then libc line-buffers).
    consoleIsTty: process.stdout.isTTY === true,
    // Read the host's stdin as the program reads its own, only when it does: what is there, waiting
    // for it if need be (EOF: nothing). A Ctrl-C while it waits is taken at once (host-stdin.ts).
    stdin: (max) => {
      // What the user types lands on the terminal's line, not after the progress line.
      progress?.clear()
      const data = hostStdin.read(max, takeCtrlC)
      if (data) return data
      // Interrupted, as n_tty_read is: the read sleeps, the SIGINT ends the sleep (-ERESTARTSYS: the
      // handler runs, or the default action kills); an ignored one lets it go back to waiting.
      const task: Task = kernel.current(kernel.machine.current ?? kernel.machine.cpus[0])
      return { wouldBlock: true, ready: (): boolean => !hasDeliverableSignal(task) && task.pendingKill === 0 }
    },
  })
  // Like qemu-user: the host's files as they are (reads) under an in-memory layer (writes never reach
  // the host), the program at its own path, the working directory the same. The kernel's /dev and the
  // guest's own /proc and /sys (none) replace the host's.
  let path = resolve(program)
  let cwd = process.cwd()
  if (options.isolated) {
    path = guestPath(program)
    cwd = '/'
    kernel.vfs.writeFile(path, bytes)
  } else {
    // The host's /etc/passwd and /etc/group replace the kernel's minimal ones (root and nobody).
    kernel.vfs.mountHost('/', hostDirectory('/'), { readOnly: false, hide: ['/dev', '/proc', '/sys'] })
  }
  for (const { host, guest } of mounts) kernel.vfs.mountHost(guest, hostDirectory(host))
  // User probes (a PATH in the probe point makes a definition one, as in tracefs) are found in the
  // guest's files now, before the boot (a relative PATH is the guest's working directory's), and
  // registered once the program is there to carry them.
  const uprobes: ResolvedUprobe[] = probeDefs
    .filter(isUprobeDefinition)
    .map((d) => resolveUprobe(kernel, d, { cwd, isolated: options.isolated }))
  kernel.boot()
  let traceFd = 2
  // Trace lines are probekit's own output: when they cannot be written (the
  // reader has gone, a full disk) the run has no point and stops here.
  let traceError = 0
  // Hits whose line could not be written (from the failed write on), said at the end: nothing is lost silently.
  let lostEvents = 0
  let armed: ArmedProbes | null = null
  let armedUprobes: ArmedUprobes | null = null
  const format: HitFormat = options.json ? 'json' : 'ftrace'
  let optprobes: Optprobes | null = null
  const emit = (line: string) => {
    if (straceError !== 0)
      throw new CliError(
        `${options.straceFile ? `--strace-file ${options.straceFile}` : 'strace output (stderr)'}: ${describeWriteError(straceError)}; the run was stopped`,
        1,
      )
    if (traceError !== 0) {
      lostEvents++
      return
    }
    const n = toHost(traceFd, utf8(`${line}\n`))
    if (n < 0) {
      traceError = n
      lostEvents++
      kernel.machine.stop('trace output failed')
    }
  }
  if (probeDefs.length > 0) {
    const kprobeDefs = probeDefs.filter((d): d is KprobeDefinition => !isUprobeDefinition(d))
    if (kprobeDefs.length > 0) {
      armed = armProbes(kernel, kprobeDefs, emit, format, filters)
      // CONFIG_OPTPROBES: each kernel probe is an int3 probe first, then a jump where it can be one.
      optprobes = new Optprobes(armed.kprobes)
    }
    // uprobe_register: the user probes go into every process that maps their files from now on (the
    // program's own text as spawn maps it, before its first instruction; libraries as ld.so maps them).
    if (uprobes.length > 0) armedUprobes = armUprobes(kernel, uprobes, emit, format, filters)
  }
  applySysctls(
    kernel,
    sysctls,
    optprobes ? '' : '; debug.kprobes_optimization is there when the run has kernel probes (-p)',
  )
  // Opened once every probe is in place and every setting taken: a probe that cannot be placed or a
  // bad --sysctl leaves no empty file.
  if (options.trace && probeDefs.length > 0) {
    try {
      traceFd = openSync(options.trace, 'w')
    } catch (e) {
      throw new CliError(`--trace ${options.trace}: cannot write it (${(e as NodeJS.ErrnoException).code})`)
    }
  }
  // strace's lines are probekit's own output too: a write that fails stops the run.
  let straceFd = 2
  let straceError = 0
  let straceEngine: StraceEngine | null = null
  if (strace) {
    if (options.straceFile) {
      try {
        straceFd = openSync(options.straceFile, 'w')
      } catch (e) {
        throw new CliError(
          `--strace-file ${options.straceFile}: cannot write it (${(e as NodeJS.ErrnoException).code})`,
        )
      }
    }
    straceEngine = new StraceEngine(kernel, {
      only,
      json: options.json,
      emit: (line) => {
        if (straceError !== 0) return
        const n = toHost(straceFd, utf8(`${line}\n`))
        if (n < 0) {
          straceError = n
          kernel.machine.stop('strace output failed')
        }
      },
    })
  }
  try {
    const task = kernel.spawn(path, [program, ...args], guestEnvironment(process.env), {
      cwd: typeof kernel.vfs.lookup(cwd) === 'number' ? '/' : cwd,
    })
    // Before it runs its first instruction, as strace -f attaches to what it starts.
    straceEngine?.attach(task)
  } catch (e) {
    if (!(e instanceof ExecError || e instanceof ElfError)) throw e
    const hint =
      e instanceof ExecError && options.isolated
        ? ' (with --isolated the guest sees only --mount directories: mount what it needs, or leave --isolated out)'
        : ''
    throw new CliError(`${program}: cannot run it: ${e.message.replace(`${path}: `, '')}${hint}`)
  }
  const stopListening = interrupts.listen()
  // On an interactive stderr only: never in a pipe or a file, never in CI, nor among JSON lines.
  if (
    options.progress !== false &&
    io.stderrIsTty === true &&
    !options.json &&
    !progressUnwanted(process.env)
  )
    progress = new RunProgress({
      fd: 2,
      columns: process.stderr.columns || 80,
      label: basename(program),
      instructions: () => kernel.machine.totalInstructions(),
    })
  const { result, exit } = (() => {
    try {
      return kernel.run(budget)
    } finally {
      stopListening()
      hostStdin.close()
      // Erased before anything else is said (the summary, an error).
      progress?.stop()
      progress = null
    }
  })()
  if (options.dmesg) io.stderr.write(`${kernel.printk.text()}\n`)
  if (traceError !== 0)
    throw new CliError(
      `${options.trace ? `--trace ${options.trace}` : 'trace output (stderr)'}: ${describeWriteError(traceError)}; the run was stopped (${lostEvents} trace event${lostEvents === 1 ? '' : 's'} not written)`,
      1,
    )
  if (armed)
    for (const line of missedReturns(armed)) io.stderr.write(`${io.colors.yellow('probekit:')} ${line}\n`)
  if (options.stats) {
    // kprobe_profile's "  %-44s %15lu %15lu": event, hits, misses (a probe that never fires, in a
    // function's padding, counts 0).
    for (const d of probeDefs) {
      const p = armed?.profile.get(eventKey(d)) ?? armedUprobes?.profile.get(eventKey(d))
      io.stderr.write(
        `  ${d.event.padEnd(44)} ${String(p?.hits ?? 0).padStart(15)} ${String(p?.misses() ?? 0).padStart(15)}\n`,
      )
    }
  }
  if (options.kprobesList) io.stderr.write(armed ? armed.kprobes.debugfsList() : '')
  if (options.detours && armed && optprobes) {
    const addrs = [...new Set(armed.kprobes.probes().map((p) => p.addr))]
    io.stderr.write(detoursListing(kernel, optprobes, addrs, io.colors))
  }
  // What the emulated machine lacks is reported by name, never silently.
  for (const [nr, count] of kernel.unimplemented) {
    io.stderr.write(
      `${io.colors.yellow('probekit:')} unimplemented syscall ${nr} (${syscallName(nr)}) returned ENOSYS ${count} time(s)\n`,
    )
  }
  for (const [what, count] of kernel.unimplementedInstructions) {
    io.stderr.write(`${io.colors.yellow('probekit:')} ${what}: raised #UD (SIGILL) ${count} time(s)\n`)
  }
  // The OOM killer's reports (the kernel log's, as dmesg shows them on Linux): why a process died of SIGKILL.
  if (!options.dmesg)
    for (const { text } of kernel.printk.lines)
      if (text.startsWith('Out of memory')) io.stderr.write(`${io.colors.yellow('probekit:')} ${text}\n`)
  // Killed by SIGPIPE (its reader went away, as in `| head`) or by the Ctrl-C that was asked for: quiet, as a shell is.
  if (exit?.signal && exit.signal !== SIGPIPE && !(exit.signal === SIGINT && ctrlC > 0))
    io.stderr.write(`${io.colors.yellow('probekit:')} ${program} was killed by ${signalName(exit.signal)}\n`)
  // The kernel oopsed - a probe handler (probekit's own, for -p) that threw or faulted, or the guest
  // kernel's own code: the kernel's oops report, and a distinct status.
  if (result.reason === 'oops') {
    if (!options.dmesg) for (const line of oopsReports(kernel)[0] ?? []) io.stderr.write(`${line}\n`)
    throw new CliError(`the kernel oopsed: ${result.detail}; this is a bug in probekit`, EXIT_OOPS)
  }
  if (exit) return exit.status
  if (result.reason === 'stopped' && ctrlC > 1)
    throw new CliError(`${program}: interrupted (Ctrl-C twice): the run was stopped`, EXIT_INTERRUPTED)
  if (result.reason === 'budget')
    throw new CliError(
      `${program} ran past the instruction budget (${budget}); raise --max-instructions if it is not a runaway`,
      EXIT_BUDGET,
    )
  throw new CliError(`${program} did not exit: ${result.detail}`, 1)
}

const encoder = new TextEncoder()
function utf8(s: string): Uint8Array {
  return encoder.encode(s)
}

const SIGPIPE = 13
const SIGINT = 2
const KIB = 1024
const MIB = 1024 * 1024

/**
 * The host's environment as the guest gets it: less bin/probekit.js's notes to this process (the
 * interrupt file, host-interrupts.ts) and the variables it set for node alone (PROBEKIT_NODE_ENV).
 */
export function guestEnvironment(env: NodeJS.ProcessEnv): string[] {
  const launcher = new Set([
    'PROBEKIT_INTERRUPT_FD',
    'PROBEKIT_NODE_ENV',
    ...(env.PROBEKIT_NODE_ENV ?? '').split(','),
  ])
  return Object.entries(env)
    .filter(([k]) => !launcher.has(k))
    .map(([k, v]) => `${k}=${v}`)
}
