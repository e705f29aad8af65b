// The packages the site documents, in layer order (bottom up). The sidebar and
// the packages overview are built from this list, and a test checks it
// against packages/* so a new package cannot go undocumented.

export interface DocumentedPackage {
  /** Directory under packages/, also the page name under docs' packages/. */
  dir: string
  /** npm name. */
  name: string
  status: 'in progress' | 'planned' | 'available'
  /** One line: what the package is. */
  summary: string
}

export const documentedPackages: readonly DocumentedPackage[] = [
  {
    dir: 'x86-emu',
    name: '@probekit/x86-emu',
    status: 'in progress',
    summary:
      'The machine: an x86-64 emulator that runs real machine code (integer, x87, SSE, SSE2), with its decoder, CPUs, memory and traps.',
  },
  {
    dir: 'kernel',
    name: '@probekit/kernel',
    status: 'in progress',
    summary:
      'A small Linux on the machine: a guest kernel image of real x86-64 code that runs static musl and glibc programs; tasks, syscalls, text_poke.',
  },
  {
    dir: 'utrace',
    name: '@probekit/utrace',
    status: 'available',
    summary: 'Per-thread tracing engines: quiesce, clone, exec, exit, signal and syscall events.',
  },
  {
    dir: 'uprobes',
    name: '@probekit/uprobes',
    status: 'in progress',
    summary: 'User-space probes over utrace: XOL area, copy-on-write text, delayed (un)registration.',
  },
  {
    dir: 'kprobes',
    name: '@probekit/kprobes',
    status: 'in progress',
    summary:
      'Kprobes, jprobes and kretprobes on kernel text: int3, out-of-line single-step, boosting, aggregates, debugfs views.',
  },
  {
    dir: 'optprobes',
    name: '@probekit/optprobes',
    status: 'in progress',
    summary: 'Jump optimization for kprobes: a 5-byte jmp to a detour buffer instead of int3.',
  },
  {
    dir: 'cli',
    name: 'probekit',
    status: 'in progress',
    summary:
      'The probekit command (run with tracefs-syntax kernel probes, demo, decode) and the meta-package.',
  },
]
