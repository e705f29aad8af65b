// probekit run -p for user space: uprobe_events definitions
// (Documentation/trace/uprobetracer.rst) on a file in the guest's file
// system, PATH:OFFSET with OFFSET a file offset, or PATH:SYMBOL[+OFFS]
// resolved through the file's symbol table as perf probe -x does. Armed
// with @probekit/uprobes' inode-based uprobe_register (every process that
// maps the file gets the breakpoint), each hit printed as an ftrace line in
// trace_uprobe.c's format: `EVENT: (0xVADDR) ARGS`, or for a return
// `EVENT: (0xRET <- 0xFUNC) ARGS`.

import { posix } from 'node:path'
import {
  EINVAL,
  ElfError,
  type ElfFile,
  type ElfSymbol,
  ENOENT,
  errnoName,
  type Kernel,
  PF_X,
  type ProgramHeader,
  PT_LOAD,
  type PtRegsFrame,
  parseElf,
  RegularFile,
  readDynamicSymbols,
  readSymbols,
  type UprobeDefinition,
  uprobeWhere,
} from '@probekit/kernel'
import { type UprobeConsumer, uprobesOf } from '@probekit/uprobes'
import { CliError } from './cli-error.js'
import type { EventFilters } from './event-filters.js'
import { formatHit, type Hit, type HitFormat, hitPasses } from './hit.js'

const STT_OBJECT = 1
const STT_FUNC = 2
const STT_SECTION = 3
const STT_FILE = 4
const STT_TLS = 6
const STT_GNU_IFUNC = 10
const SHN_UNDEF = 0
const STB_GLOBAL = 1

/** A uprobe definition's probe point, found in the guest's file system. */
export interface ResolvedUprobe {
  def: UprobeDefinition
  /** The absolute guest path, and the file there. */
  path: string
  inode: RegularFile
  /** The probed file offset. */
  offset: number
  /** The address the ELF gives that offset (a running process adds its load bias). */
  vaddr: number
  /** The file's PT_LOAD segments: where @+FILE_OFFSET finds a file offset. */
  loads: ProgramHeader[]
}

/** The probe point as the definition gives it, for messages: PATH:0xOFFSET or PATH:SYMBOL[+OFFS]. */
export function uprobePlace(def: UprobeDefinition): string {
  const t = def.target
  return 'symbol' in t
    ? `${t.path}:${t.symbol}${t.offset ? `+0x${t.offset.toString(16)}` : ''}`
    : `${t.path}:0x${t.offset.toString(16)}`
}

const hex = (n: number) => `0x${n.toString(16)}`

/** A defined symbol of that name: .symtab's, else .dynsym's; a function (or untyped label) before anything else. */
function findSymbol(elf: ElfFile, name: string): ElfSymbol | 'none' | 'no-table' {
  const tables = [readSymbols(elf), readDynamicSymbols(elf)]
  if (tables.every((t) => t.length === 0)) return 'no-table'
  for (const table of tables) {
    const defined = table.filter(
      (s) => s.name === name && s.shndx !== SHN_UNDEF && s.type !== STT_SECTION && s.type !== STT_FILE,
    )
    const code = defined.filter((s) => s.type === STT_FUNC || s.type === STT_GNU_IFUNC || s.type === 0)
    const pick = (list: ElfSymbol[]) => list.find((s) => s.bind === STB_GLOBAL) ?? list[0]
    const found = pick(code) ?? pick(defined)
    if (found) return found
  }
  return 'none'
}

/** The PT_LOAD segment whose bytes in the file hold this offset. */
function segmentOfOffset(loads: readonly ProgramHeader[], offset: number): ProgramHeader | undefined {
  return loads.find((p) => offset >= p.offset && offset < p.offset + p.filesz)
}

/**
 * Find a definition's file and file offset: the file must be a regular file and an x86-64 ELF, the
 * offset inside an executable PT_LOAD's bytes in the file. A symbol's file offset is st_value -
 * p_vaddr + p_offset of the PT_LOAD that holds it, plus OFFS.
 */
export function resolveUprobe(
  kernel: Kernel,
  def: UprobeDefinition,
  options: { cwd: string; isolated?: boolean },
): ResolvedUprobe {
  const place = uprobePlace(def)
  const fail = (reason: string): never => {
    throw new CliError(`cannot place probe ${def.event} at ${place}: ${reason}`)
  }
  const path = posix.resolve(options.cwd, def.target.path)
  const node = kernel.vfs.lookup(path)
  if (typeof node === 'number') {
    const hint =
      node === -ENOENT && options.isolated
        ? ' (with --isolated the guest sees only --mount directories and the program)'
        : ''
    return fail(
      `${path}: ${node === -ENOENT ? 'no such file' : `cannot look it up (${errnoName(node)})`}${hint}`,
    )
  }
  if (!(node instanceof RegularFile)) return fail(`${path}: not a regular file`)
  let elf: ElfFile
  try {
    elf = parseElf(node.contents())
  } catch (e) {
    if (e instanceof ElfError) return fail(`${path}: ${e.message}`)
    throw e
  }
  const loads = elf.programHeaders.filter((p) => p.type === PT_LOAD)
  const text = loads.filter((p) => (p.flags & PF_X) !== 0)
  const textRanges = () =>
    text.length === 0
      ? 'it has no executable segment'
      : `its code is at file offsets ${text.map((p) => `${hex(p.offset)}-${hex(p.offset + p.filesz)}`).join(', ')}`
  let offset: number
  const t = def.target
  if ('symbol' in t) {
    let sym: ReturnType<typeof findSymbol>
    try {
      sym = findSymbol(elf, t.symbol)
    } catch (e) {
      if (e instanceof ElfError) return fail(`${path}: ${e.message}`)
      throw e
    }
    if (sym === 'no-table')
      return fail(`${path} has no symbol table (stripped of .symtab and .dynsym): give a file offset instead`)
    if (sym === 'none') return fail(`no symbol '${t.symbol}' in ${path} (.symtab or .dynsym)`)
    if (sym.type === STT_OBJECT || sym.type === STT_TLS)
      return fail(`'${t.symbol}' is data (${sym.type === STT_TLS ? 'a TLS' : 'an'} object), not a function`)
    const seg = loads.find((p) => sym.value >= p.vaddr && sym.value < p.vaddr + p.filesz)
    if (!seg || (seg.flags & PF_X) === 0)
      return fail(`'${t.symbol}' (${hex(sym.value)}) is not in an executable segment of ${path}`)
    if (sym.size > 0 && t.offset >= sym.size)
      return fail(`${hex(t.offset)} is past the end of ${t.symbol} (${sym.size} bytes)`)
    offset = sym.value - seg.vaddr + seg.offset + t.offset
  } else offset = t.offset
  const seg = segmentOfOffset(text, offset)
  if (!seg)
    return fail(`file offset ${hex(offset)} is not in an executable segment of ${path} (${textRanges()})`)
  return { def, path, inode: node, offset, vaddr: seg.vaddr + (offset - seg.offset), loads }
}

/**
 * @+FILE_OFFSET: where a process that hit the probe at hitVaddr (the probed offset's address, or
 * for a return the function's) has that offset of the file. Through the PT_LOAD that holds it and
 * the process's load bias, so .data is found even where its segment's vaddr - offset differs from
 * the text's; an offset no PT_LOAD holds goes by the probed text's (trace_uprobe.c's
 * translate_user_vaddr: hit address - probed offset + file offset).
 */
export function fileAddress(r: ResolvedUprobe, hitVaddr: number, fileOffset: number): number {
  const bias = hitVaddr - r.vaddr
  const seg = segmentOfOffset(r.loads, fileOffset)
  return seg ? seg.vaddr + (fileOffset - seg.offset) + bias : hitVaddr - r.offset + fileOffset
}

const REASONS: Record<number, string> = {
  [-ENOENT]: 'no such file',
  [-EINVAL]:
    'this offset cannot be probed (not an executable part of the file, or an instruction uprobes refuse)',
}

/** What armUprobes placed: each definition's consumer, for unregistering. */
export interface ArmedUprobes {
  probes: { resolved: ResolvedUprobe; consumer: UprobeConsumer }[]
  /** Per GRP/EVENT: the hits, filtered out or not (uprobes count no misses). */
  profile: Map<string, { hits: number; misses: () => number }>
}

/**
 * Register each resolved probe with uprobe_register, on the file's inode: every process that maps
 * it executable, now (as the program just spawned, before its first instruction) or later (exec,
 * a library's mmap, a fork's copy), gets the breakpoint. Every hit its event's filter (-f) matches
 * calls emit(line).
 */
export function armUprobes(
  kernel: Kernel,
  resolved: readonly ResolvedUprobe[],
  emit: (line: string) => void,
  format: HitFormat = 'ftrace',
  filters?: EventFilters,
): ArmedUprobes {
  const up = uprobesOf(kernel)
  const probes: ArmedUprobes['probes'] = []
  const profile: ArmedUprobes['profile'] = new Map()
  for (const r of resolved) {
    const d = r.def
    const stats = { hits: 0, misses: () => 0 }
    const filter = filters?.get(`${d.group}/${d.event}`)
    const record = (regs: PtRegsFrame, hitVaddr: number, where: string, returnAddress?: number) => {
      // Linux's current: the thread that hit the probe, on the CPU it runs on.
      const task = up.current
      if (!task) return
      const cpu = Math.max(task.cpu, 0)
      const ctx = {
        kernel,
        regs,
        task,
        user: true,
        fileAddress: (o: number) => fileAddress(r, hitVaddr, o),
      }
      // uprobe_dispatcher counts every hit (nhit); the filter decides at commit.
      stats.hits++
      const hit: Hit = {
        comm: task.comm,
        pid: task.pid,
        cpu,
        nanoseconds: kernel.machine.cycles(cpu),
        group: d.group,
        event: d.event,
        probe: d.kind === 'r' ? 'r' : 'p',
        address: hitVaddr,
        returnAddress,
        where,
        ctx,
        args: d.args,
      }
      if (hitPasses(filter, hit)) emit(formatHit(hit, format))
    }
    const consumer: UprobeConsumer =
      d.kind === 'p'
        ? {
            // At handler time ip is the probed address.
            handler: (_self, regs) => {
              const ip = regs.get('ip')
              record(regs, ip, uprobeWhere(ip))
              return 0
            },
          }
        : {
            // func is the function's address, ip the real return address.
            ret_handler: (_self, func, regs) => {
              record(regs, func, uprobeWhere(regs.get('ip'), func), regs.get('ip'))
              return 0
            },
          }
    const ret = up.uprobe_register(r.inode, r.offset, consumer)
    if (ret !== 0)
      throw new CliError(
        `cannot place probe ${d.event} at ${uprobePlace(d)}: ${REASONS[ret] ?? `error ${errnoName(ret)}`}`,
      )
    probes.push({ resolved: r, consumer })
    profile.set(`${d.group}/${d.event}`, stats)
  }
  return { probes, profile }
}
