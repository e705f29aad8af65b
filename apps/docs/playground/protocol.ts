// The messages between the playground page and its worker: the page asks
// for one run, the worker answers with everything the run showed, or with
// the one-line error that stopped it before it started.

/** The static musl programs bundled with the site (packages/kernel/fixtures/bin). */
export const PLAYGROUND_PROGRAMS = ['hello', 'fileio', 'myprog', 'proctree'] as const
export type PlaygroundProgram = (typeof PLAYGROUND_PROGRAMS)[number]

export interface RunRequest {
  type: 'run'
  program: PlaygroundProgram
  /** argv[1..]. */
  args: string[]
  /** Probe definitions, one per line (kprobe_events and uprobe_events syntax); '#' starts a comment. */
  definitions: string
  /** Jump-optimize the kernel probes before the program starts; off is debug.kprobes_optimization=0. */
  optimize: boolean
  /** The guest stops after this many instructions: a runaway cannot hang the worker. */
  maxInstructions: number
}

/** Why a listing line is marked. */
export type LineMark = '' | 'int3' | 'jump' | 'replaced' | 'detour' | 'copied'

export interface ListingLine {
  address: string
  /** <+N> from the listing's start. */
  offset: string
  bytes: string
  text: string
  note: string
  mark: LineMark
}

export interface Listing {
  title: string
  lines: ListingLine[]
}

export interface RunReport {
  stdout: string
  stderr: string
  /** One ftrace line per probe hit, in order. */
  trace: string[]
  /** How the run ended: the exit status, a signal, the budget. */
  status: string
  instructions: number
  /** Each probed function (then each detour buffer), the probed instructions marked. */
  listings: Listing[]
  /** debugfs kprobes/list at the end of the run. */
  kprobesList: string
}

export type WorkerReply =
  | { type: 'result'; report: RunReport }
  /** A definition the kernel refuses, an unknown symbol, ...: one line, as probekit run prints it. */
  | { type: 'error'; message: string }
