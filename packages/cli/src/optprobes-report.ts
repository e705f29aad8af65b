// What `probekit run` shows of jump optimization: --sysctl NAME=VALUE
// (debug.kprobes_optimization, as /proc/sys/debug/kprobes-optimization), and
// at the end --kprobes-list (debugfs kprobes/list) and --detours: each
// optimized probe's patched bytes beside its detour buffer, disassembled.

import { ENOENT, type Kernel, Sysctls } from '@probekit/kernel'
import type { Optprobes } from '@probekit/optprobes'
import { decode } from '@probekit/x86-emu'
import { CliError } from './cli-error.js'
import { disassemble } from './disassembly/disassemble.js'
import { formatAddress } from './disassembly/hex.js'
import { renderListing } from './disassembly/render-listing.js'
import type { Colors } from './io.js'

export interface SysctlSetting {
  name: string
  value: string
}

/** NAME=VALUE, as sysctl -w takes it (checked before anything runs). */
export function parseSysctl(text: string): SysctlSetting {
  const eq = text.indexOf('=')
  if (eq <= 0)
    throw new CliError(`--sysctl '${text}': expected NAME=VALUE, e.g. debug.kprobes_optimization=0`)
  return { name: text.slice(0, eq).trim(), value: text.slice(eq + 1).trim() }
}

/** Set each, in order; an unknown name or a refused value stops the run with a clear error. */
export function applySysctls(kernel: Kernel, settings: readonly SysctlSetting[], hint: string): void {
  for (const s of settings) {
    const r = kernel.sysctls.set(s.name, `${s.value}\n`)
    if (r === -ENOENT) {
      const known = kernel.sysctls.paths().map((p) => p.replace(/\//g, '.'))
      throw new CliError(
        `--sysctl ${s.name}: no such setting${known.length ? ` (known here: ${known.join(', ')})` : ''}${hint}`,
      )
    }
    if (r < 0) throw new CliError(`--sysctl ${s.name}=${s.value}: invalid value (error ${r})`)
  }
}

/** The sysctl path a setting name means (for messages). */
export const sysctlPath = (name: string): string => `/proc/sys/${Sysctls.path(name)}`

/** Each probe's detour buffer beside the jump that leads there (only optimized probes have one in use). */
export function detoursListing(
  kernel: Kernel,
  optprobes: Optprobes,
  addrs: readonly number[],
  colors: Colors,
): string {
  let out = ''
  for (const addr of addrs) {
    const buf = optprobes.detourBuffer(addr)
    const where = kernel.kallsyms.format(addr)
    if (!buf) {
      out += `${where}: not optimized (${optprobes.refused.get(addr) ?? 'an int3 probe'})\n`
      continue
    }
    const jumped = optprobes.isOptimized(addr)
    // The jump (or the int3 and the instructions), not what is left of the replaced ones after it.
    const patched = kernel.readKernel(addr, jumped ? 5 : buf.size)
    out += `${where}: ${jumped ? 'optimized: the text jumps to the detour buffer' : `${buf.state}: still the int3 (the buffer is ready)`}\n`
    out += `${renderListing(disassemble(decode, patched, addr).instructions, colors)}\n`
    if (jumped && buf.size > 5)
      out += `(then ${buf.size - 5} byte${buf.size - 5 === 1 ? '' : 's'} left of the replaced instructions, never run while the jump is there)\n`
    out += `detour buffer at ${formatAddress(buf.address)}, ${buf.bytes.length} bytes (the copies of the ${buf.size} replaced bytes from +${buf.copyOffset}):\n`
    out += `${renderListing(disassemble(decode, buf.bytes, buf.address).instructions, colors)}\n`
  }
  return out
}
