// probekit list [GLOB]: the guest kernel's functions, as perf probe --funcs
// and available_filter_functions list them, the ones kprobes refuse marked;
// probekit list --blacklist: debugfs kprobes/blacklist; probekit list -x
// BINARY [GLOB]: the functions of a user program or library.

import { readFileSync } from 'node:fs'
import { ElfError, Kernel } from '@probekit/kernel'
import { Kprobes } from '@probekit/kprobes'
import { CliError } from '../cli-error.js'
import { readGuestImage } from '../guest-image.js'
import type { CliIo } from '../io.js'
import { strglobmatch } from '../list/strglobmatch.js'
import { userFunctions } from '../list/user-functions.js'

export interface ListOptions {
  /** A user program or library instead of the kernel. */
  x?: string
  /** debugfs kprobes/blacklist: the address ranges kprobes refuse. */
  blacklist?: boolean
}

/** The guest kernel with its kprobes layer (not booted: the symbols and the blacklist are all we read). */
function guestKprobes(): Kprobes {
  return new Kprobes(new Kernel({ image: readGuestImage(), memorySize: 64 * 1024 * 1024 }))
}

const hex = (a: number) => `0x${BigInt.asUintN(64, BigInt(a)).toString(16).padStart(16, '0')}`

export function listCommand(glob: string | undefined, options: ListOptions, io: CliIo): void {
  const match = (name: string) => glob === undefined || strglobmatch(name, glob)
  if (options.x !== undefined) {
    if (options.blacklist)
      throw new CliError('--blacklist lists the kernel blacklist: it does not go with -x')
    let bytes: Uint8Array
    try {
      bytes = new Uint8Array(readFileSync(options.x))
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      throw new CliError(`-x ${options.x}: ${code === 'ENOENT' ? 'no such file' : 'cannot read it'}`)
    }
    let names: string[]
    try {
      names = userFunctions(bytes).map((f) => f.name)
    } catch (e) {
      if (e instanceof ElfError) throw new CliError(`-x ${options.x}: ${e.message}`)
      throw e
    }
    if (names.length === 0)
      throw new CliError(`-x ${options.x}: no function symbols (stripped of .symtab and .dynsym)`, 1)
    for (const n of names) if (match(n)) io.stdout.write(`${n}\n`)
    return
  }
  const kprobes = guestKprobes()
  const ks = kprobes.kernel.kallsyms
  if (options.blacklist) {
    // As debugfs prints it: one range a line, with the function there.
    for (const [start, end] of kprobes.kprobeBlacklist()) {
      const name = ks.lookup(start)?.symbol.name ?? '?'
      if (match(name)) io.stdout.write(`${hex(start)}-${hex(end)}\t${name}\n`)
    }
    return
  }
  const functions = [
    ...new Set(
      ks
        .all()
        .filter((s) => s.type === 't' || s.type === 'T')
        .map((s) => s.name),
    ),
  ]
    .filter(match)
    .sort()
  for (const name of functions) {
    const address = ks.lookupName(name) as number
    io.stdout.write(
      kprobes.within_kprobe_blacklist(address) ? `${name}\t${io.colors.dim('[blacklisted]')}\n` : `${name}\n`,
    )
  }
}
