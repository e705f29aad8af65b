// sysctl (kernel/sysctl.c): named kernel settings, each a text value read
// and written whole, as /proc/sys/<name with dots as slashes> shows them.
// Parts of probekit register theirs (optprobes: debug.kprobes_optimization);
// procfs and the command line (--sysctl NAME=VALUE) reach them here.

import { EINVAL, ENOENT } from './errno.js'

export interface SysctlEntry {
  /** The value as reading the file gives it (with its newline). */
  read(): string
  /** Set from what was written (trailing newline included); 0 or -errno (-EINVAL for a bad value). */
  write(value: string): number
}

export class Sysctls {
  private readonly entries = new Map<string, SysctlEntry>()

  /** register_sysctl: name in dots or slashes (debug.kprobes_optimization, debug/kprobes-optimization). */
  register(name: string, entry: SysctlEntry): void {
    this.entries.set(Sysctls.path(name), entry)
  }

  unregister(name: string): void {
    this.entries.delete(Sysctls.path(name))
  }

  /** By its name; kprobes_optimization also finds kprobes-optimization (the seed's spelling of the file's). */
  get(name: string): SysctlEntry | undefined {
    const path = Sysctls.path(name)
    return this.entries.get(path) ?? this.entries.get(path.replace(/_/g, '-'))
  }

  /** Every registered path (slashes), sorted. */
  paths(): string[] {
    return [...this.entries.keys()].sort()
  }

  /** What `sysctl NAME=VALUE` does: 0, -ENOENT (no such setting) or the entry's error. */
  set(name: string, value: string): number {
    const e = this.get(name)
    if (!e) return -ENOENT
    return e.write(value)
  }

  /** /proc/sys paths use slashes; sysctl(8) names use dots. */
  static path(name: string): string {
    return name.replace(/\./g, '/')
  }
}

/** proc_dointvec_minmax for a 0/1 switch: "0" or "1" (surrounding space allowed), else -EINVAL. */
export function parseBoolInt(value: string): number {
  const v = value.trim()
  if (v === '0') return 0
  if (v === '1') return 1
  return -EINVAL
}
