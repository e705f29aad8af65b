// probekit disasm SYMBOL | ADDRESS | BINARY:SYMBOL: a function's
// disassembly (address, bytes, capstone's text, <symbol+0xoff> targets).
// A kernel function is read from a booted guest kernel, after -p placed
// probes on it: the listing shows the original instructions (as kprobes
// recovers them) with the probed ones marked, and with --optimize the
// 5-byte jump optimization put there and its detour buffer.

import { readFileSync } from 'node:fs'
import { ElfError, isUprobeDefinition, Kernel, type KprobeDefinition, parseElf } from '@probekit/kernel'
import { Optprobes } from '@probekit/optprobes'
import { CliError } from '../cli-error.js'
import { openCapstone } from '../disasm/capstone.js'
import { type DisasmLine, type NameOf, renderDisasm, sweep } from '../disasm/listing.js'
import { formatAddress } from '../disassembly/hex.js'
import { readGuestImage } from '../guest-image.js'
import type { CliIo } from '../io.js'
import { type UserFunction, userFunctions } from '../list/user-functions.js'
import { parseAddress } from '../parse-address.js'
import { armProbes, parseDefinitions } from '../probes.js'

export interface DisasmOptions {
  /** kprobe_events definitions to place first. */
  probe?: string[]
  /** Run the kprobe-optimizer: show the jumps and their detour buffers. */
  optimize?: boolean
}

const JMP32_INSN_SIZE = 5
const isAddress = (t: string) => /^-?(0x[0-9a-f]+|[0-9]+)$/i.test(t.trim())
const plusOffset = (name: string, off: number) => (off === 0 ? name : `${name}+0x${off.toString(16)}`)

export async function disasmCommand(target: string, options: DisasmOptions, io: CliIo): Promise<void> {
  const probes = options.probe ?? []
  const colon = target.lastIndexOf(':')
  if (colon > 0 && !isAddress(target)) {
    if (probes.length > 0 || options.optimize)
      throw new CliError(`-p and --optimize place kernel probes: they do not go with ${target}`)
    return userDisasm(target.slice(0, colon), target.slice(colon + 1), io)
  }
  const kernel = new Kernel({ image: readGuestImage(), memorySize: 64 * 1024 * 1024 })
  const ks = kernel.kallsyms
  let fn = isAddress(target) ? ks.functionAt(parseAddress(target)) : ks.symbol(target)
  if (!fn)
    throw new CliError(
      isAddress(target)
        ? `${target}: not inside any kernel function`
        : `${target}: no such kernel symbol (probekit list shows the functions)`,
    )
  if (fn.type !== 't' && fn.type !== 'T')
    throw new CliError(`${target}: not a function (kallsyms type ${fn.type})`)
  // The sized symbol at that address, when the name found an alias without a size.
  if (fn.size === 0) fn = ks.functionAt(fn.address) ?? fn
  if (fn.size === 0) throw new CliError(`${target}: kallsyms has no size for ${fn.name}`)
  const start = fn.address

  const defs = parseDefinitions(probes, ks)
  if (defs.some(isUprobeDefinition))
    throw new CliError('disasm -p places kernel probes (kprobe_events syntax), not user probes')
  if (options.optimize && defs.length === 0)
    throw new CliError('--optimize optimizes the probes -p places: give at least one')
  kernel.boot()
  const kdefs = defs as KprobeDefinition[]
  const armed = kdefs.length > 0 ? armProbes(kernel, kdefs, () => {}) : null
  let optprobes: Optprobes | null = null
  if (armed && options.optimize) {
    optprobes = new Optprobes(armed.kprobes)
    // The kprobe-optimizer's delayed work, run now (it would run OPTIMIZE_DELAY jiffies later).
    optprobes.wait_for_kprobe_optimizer()
  }

  // Each probe's event by address (an int3 there is that probe's).
  const events = new Map<number, string[]>()
  for (const d of kdefs) {
    const t = d.target
    const at =
      'address' in t ? Number(BigInt.asIntN(64, t.address)) : (ks.lookupName(t.symbol) ?? NaN) + t.offset
    const label = `${d.kind === 'r' ? 'kretprobe' : 'kprobe'} ${d.event}`
    events.set(at, [...(events.get(at) ?? []), label])
  }

  // The text as it was: kprobes' and optprobes' saved bytes put back (recover_probed_instruction).
  const text = kernel.readKernel(start, fn.size)
  optprobes?.recoverBytes(start, text)
  for (let i = 0; i < text.length; i++) {
    const p = armed?.kprobes.get_kprobe(start + i)
    if (p && text[i] === 0xcc) text[i] = p.opcode
  }

  const nameOf: NameOf = (a) => {
    const loc = ks.lookup(a)
    return loc ? plusOffset(loc.symbol.name, loc.offset) : null
  }
  const cs = await openCapstone()
  try {
    const lines = sweep(text, start, cs.one, nameOf)
    const buffers: string[] = []
    const out: DisasmLine[] = []
    // The bytes an optimized probe's jump covers: [from, to).
    let replaced = { from: 0, to: 0 }
    for (const line of lines) {
      const labels = (events.get(line.address) ?? []).join(', ')
      const buf = optprobes?.isOptimized(line.address) ? optprobes.detourBuffer(line.address) : null
      if (buf) {
        // The jump in the text now, then the instructions it replaced (copied to the buffer).
        const jmp = kernel.readKernel(line.address, JMP32_INSN_SIZE)
        const [jump] = sweep(jmp, line.address, cs.one, () => 'detour buffer')
        out.push({ ...jump, notes: [`[optimized ${labels}]`] })
        replaced = { from: line.address, to: line.address + buf.size }
        const bufLines = sweep(buf.bytes, buf.address, cs.one, nameOf)
        buffers.push(
          `detour buffer of ${labels} at ${formatAddress(buf.address)}, ${buf.bytes.length} bytes (the ${buf.size} replaced bytes copied at +${buf.copyOffset}):\n${renderDisasm(bufLines, buf.address, io.colors)}`,
        )
      }
      if (line.address >= replaced.from && line.address < replaced.to)
        line.notes.push('[replaced by the jump]')
      else if (labels && armed?.kprobes.get_kprobe(line.address)) {
        // With --optimize, say why this one stayed an int3 probe (optprobes' refusal).
        const why = optprobes?.refused.get(line.address)
        line.notes.push(`[${labels}${why ? `, not optimized: ${why}` : ''}]`)
      }
      out.push(line)
    }
    io.stdout.write(
      `${formatAddress(start)} <${fn.name}>, ${fn.size} bytes:\n${renderDisasm(out, start, io.colors)}\n`,
    )
    for (const b of buffers) io.stdout.write(`\n${b}\n`)
  } finally {
    cs.close()
  }
}

/** BINARY:SYMBOL: a function of a user program or library, at its addresses in the file (as objdump -d shows them). */
function userDisasm(path: string, name: string, io: CliIo): Promise<void> {
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(readFileSync(path))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new CliError(
      `${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : 'cannot read it'}`,
    )
  }
  let functions: UserFunction[]
  let elf: ReturnType<typeof parseElf>
  try {
    elf = parseElf(bytes)
    functions = userFunctions(bytes)
  } catch (e) {
    if (e instanceof ElfError) throw new CliError(`${path}: ${e.message}`)
    throw e
  }
  const fn = functions.find((f) => f.name === name)
  if (!fn) throw new CliError(`${path}: no function ${name} (probekit list -x ${path} shows them)`)
  if (fn.size === 0) throw new CliError(`${path}: ${name} has no size in the symbol table`)
  const PT_LOAD = 1
  const seg = elf.programHeaders.find(
    (p) => p.type === PT_LOAD && fn.value >= p.vaddr && fn.value + fn.size <= p.vaddr + p.filesz,
  )
  if (!seg) throw new CliError(`${path}: ${name} is not in any loaded segment of the file`)
  const off = seg.offset + (fn.value - seg.vaddr)
  const text = bytes.subarray(off, off + fn.size)
  const sorted = [...functions].sort((a, b) => a.value - b.value)
  const nameOf: NameOf = (a) => {
    let best: UserFunction | null = null
    for (const f of sorted) if (f.value <= a && a < f.value + Math.max(f.size, 1)) best = f
    return best ? plusOffset(best.name, a - best.value) : null
  }
  return openCapstone().then((cs) => {
    try {
      const lines = sweep(text, fn.value, cs.one, nameOf)
      io.stdout.write(
        `${formatAddress(fn.value)} <${name}>, ${fn.size} bytes:\n${renderDisasm(lines, fn.value, io.colors)}\n`,
      )
    } finally {
      cs.close()
    }
  })
}
