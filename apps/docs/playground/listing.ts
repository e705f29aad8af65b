// The probed functions as the CPU sees them at the end of the run: the
// kernel's text read back from guest memory, so an int3 probe shows the
// int3 kprobes wrote and an optimized probe the 5-byte jump, then the
// instructions the jump replaced and the detour buffer they were copied to.
// A uprobe's function comes from its file, with the int3 uprobes writes
// into each process's copy of the page. Instruction boundaries and branch
// targets are the engine decoder's, the text capstone's (packages/cli's
// probekit disasm listing).

import { openCapstone } from '../../../packages/cli/src/disasm/capstone.js'
import { type DisasmLine, type NameOf, sweep } from '../../../packages/cli/src/disasm/listing.js'
import { addressDigits, formatAddress, formatBytes } from '../../../packages/cli/src/disassembly/hex.js'
import { userFunctions } from '../../../packages/cli/src/list/user-functions.js'
import type { ArmedProbes } from '../../../packages/cli/src/probes.js'
import type { ResolvedUprobe } from '../../../packages/cli/src/uprobe-events.js'
import type { Kernel, KernelSymbol, KprobeDefinition } from '../../../packages/kernel/src/index.js'
import type { Optprobes } from '../../../packages/optprobes/src/index.js'
import type { LineMark, Listing, ListingLine } from './protocol.js'

const JMP32_INSN_SIZE = 5
const INT3 = 0xcc

type Capstone = Awaited<ReturnType<typeof openCapstone>>
// One handle for the worker's life: the wasm module loads once.
let capstone: Promise<Capstone> | null = null

const plusOffset = (name: string, off: number) => (off === 0 ? name : `${name}+0x${off.toString(16)}`)

function row(l: DisasmLine, base: number, mark: LineMark, note: string, bytes = l.bytes): ListingLine {
  return {
    // As probekit disasm pads them: a user address to 8 digits, a kernel one is 16 anyway.
    address: addressDigits(l.address, 8),
    offset: `<+${l.address - base}>`,
    bytes: formatBytes(bytes),
    text: mark === 'int3' ? 'int3' : l.text,
    note,
    mark,
  }
}

/** Where a kernel probe definition points. */
function kprobeAddress(kernel: Kernel, d: KprobeDefinition): number {
  const t = d.target
  return 'address' in t
    ? Number(BigInt.asIntN(64, t.address))
    : (kernel.kallsyms.lookupName(t.symbol) ?? Number.NaN) + t.offset
}

function kernelListings(
  kernel: Kernel,
  cs: Capstone,
  armed: ArmedProbes,
  optprobes: Optprobes | null,
  defs: readonly KprobeDefinition[],
): Listing[] {
  const ks = kernel.kallsyms
  const nameOf: NameOf = (a) => {
    const loc = ks.lookup(a)
    return loc ? plusOffset(loc.symbol.name, loc.offset) : null
  }
  // Each probe's events by address, and the functions they are in (each listed once).
  const labels = new Map<number, string[]>()
  const functions = new Map<number, KernelSymbol>()
  for (const d of defs) {
    const at = kprobeAddress(kernel, d)
    let fn = ks.functionAt(at)
    if (fn && fn.size === 0) fn = ks.functionAt(fn.address) ?? fn
    if (!fn || fn.size === 0 || !armed.kprobes.get_kprobe(at)) continue
    labels.set(at, [...(labels.get(at) ?? []), `${d.kind === 'r' ? 'kretprobe' : 'kprobe'} ${d.event}`])
    functions.set(fn.address, fn)
  }
  const out: Listing[] = []
  for (const fn of functions.values()) {
    const start = fn.address
    const live = kernel.readKernel(start, fn.size)
    // The original instructions, for where each starts (recover_probed_instruction).
    const original = live.slice()
    optprobes?.recoverBytes(start, original)
    for (let i = 0; i < original.length; i++) {
      const p = armed.kprobes.get_kprobe(start + i)
      if (p && original[i] === INT3) original[i] = p.opcode
    }
    const lines: ListingLine[] = []
    const buffers: Listing[] = []
    // The bytes an optimized probe's jump covers: [from, to) (kernel addresses are negative numbers).
    let replaced = { from: 0, to: 0 }
    for (const l of sweep(original, start, cs.one, nameOf)) {
      const label = (labels.get(l.address) ?? ['kprobe']).join(', ')
      const buf = optprobes?.isOptimized(l.address) ? optprobes.detourBuffer(l.address) : null
      if (buf) {
        const [jump] = sweep(
          kernel.readKernel(l.address, JMP32_INSN_SIZE),
          l.address,
          cs.one,
          () => 'detour buffer',
        )
        lines.push(row(jump, start, 'jump', `optimized ${label}: a jump to its detour buffer`))
        replaced = { from: l.address, to: l.address + buf.size }
        buffers.push(detourListing(buf, label, cs, nameOf))
      }
      if (l.address >= replaced.from && l.address < replaced.to) {
        lines.push(row(l, start, 'replaced', 'replaced by the jump (copied to the detour buffer)'))
        continue
      }
      const off = l.address - start
      if (armed.kprobes.get_kprobe(l.address) && live[off] === INT3) {
        // Why it is still an int3: optprobes refused it, optimization is off, or the optimizer has not run yet.
        const why =
          optprobes?.refused.get(l.address) ??
          (optprobes?.kprobes_optimization === 0 ? 'debug.kprobes_optimization=0' : undefined)
        const state = optprobes?.detourBuffer(l.address)?.state
        const more = why ? `; not optimized: ${why}` : state ? `; ${state}` : ''
        const bytes = live.subarray(off, off + l.bytes.length)
        lines.push(row(l, start, 'int3', `${label}: an int3 over ${l.text}${more}`, bytes))
        continue
      }
      lines.push(row(l, start, '', ''))
    }
    out.push({ title: `${formatAddress(start)} <${fn.name}>, ${fn.size} bytes`, lines }, ...buffers)
  }
  return out
}

function detourListing(
  buf: NonNullable<ReturnType<Optprobes['detourBuffer']>>,
  label: string,
  cs: Capstone,
  nameOf: NameOf,
): Listing {
  const copyStart = buf.address + buf.copyOffset
  const copyEnd = copyStart + buf.size
  const lines = sweep(buf.bytes, buf.address, cs.one, nameOf).map((l) => {
    if (l.address >= copyStart && l.address < copyEnd)
      return row(l, buf.address, 'copied', 'a replaced instruction, copied')
    if (l.address >= copyEnd) return row(l, buf.address, 'detour', 'back to the instruction after them')
    return row(l, buf.address, 'detour', '')
  })
  return {
    title: `detour buffer of ${label} at ${formatAddress(buf.address)}, ${buf.bytes.length} bytes (saves the registers, calls the handlers, runs the ${buf.size} replaced bytes, jumps back)`,
    lines,
  }
}

/** The functions the uprobes of one file are in, each listed once with all its probed instructions marked. */
function uprobeListings(cs: Capstone, probes: readonly ResolvedUprobe[]): Listing[] {
  const { path, inode, loads } = probes[0]
  const file = inode.contents()
  const functions = userFunctions(file)
  const nameOf: NameOf = (a) => {
    const f = functions.find((g) => a >= g.value && a < g.value + Math.max(g.size, 1))
    return f ? plusOffset(f.name, a - f.value) : null
  }
  const probed = functions.filter((f) => probes.some((r) => r.vaddr >= f.value && r.vaddr < f.value + f.size))
  const out: Listing[] = []
  for (const fn of probed) {
    const seg = loads.find((p) => fn.value >= p.vaddr && fn.value + fn.size <= p.vaddr + p.filesz)
    if (!seg) continue
    const off = seg.offset + (fn.value - seg.vaddr)
    const lines = sweep(file.subarray(off, off + fn.size), fn.value, cs.one, nameOf).map((l) => {
      const events = probes
        .filter((r) => r.vaddr === l.address)
        .map((r) => `${r.def.kind === 'r' ? 'uretprobe' : 'uprobe'} ${r.def.event}`)
      if (events.length === 0) return row(l, fn.value, '', '')
      // What uprobes writes at the probed offset: UPROBE_SWBP_INSN over the first byte.
      const bytes = l.bytes.slice()
      bytes[0] = INT3
      const note = `${events.join(', ')}: an int3 over ${l.text} in each process's copy of the page`
      return row(l, fn.value, 'int3', note, bytes)
    })
    out.push({ title: `${path}: ${formatAddress(fn.value)} <${fn.name}>, ${fn.size} bytes`, lines })
  }
  return out
}

/** The listings of every probed function: kernel ones first, then user ones. */
export async function probedListings(
  kernel: Kernel,
  armed: ArmedProbes | null,
  optprobes: Optprobes | null,
  kprobeDefs: readonly KprobeDefinition[],
  uprobes: readonly ResolvedUprobe[],
): Promise<Listing[]> {
  if (!armed && uprobes.length === 0) return []
  capstone ??= openCapstone()
  const cs = await capstone
  const out = armed ? kernelListings(kernel, cs, armed, optprobes, kprobeDefs) : []
  const byFile = new Map<string, ResolvedUprobe[]>()
  for (const r of uprobes) byFile.set(r.path, [...(byFile.get(r.path) ?? []), r])
  for (const probes of byFile.values()) out.push(...uprobeListings(cs, probes))
  return out
}
