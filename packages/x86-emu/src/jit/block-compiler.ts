// The block compiler: turns a hot block into one JavaScript function.
//
// Hot instruction forms become inline code (templates.ts) with register
// indices and immediates as constants; every other instruction calls the
// interpreter's closure for it. The function returns how many instructions
// completed; before any instruction that can fault it records the index in
// Cpu.ci, so faults stay precise. Writes may hit code (the block's own
// page included), so after each one the function returns if the code cache
// asked the CPU to leave the block.

import type { Cpu } from '../cpu/cpu.js'
import { type Instruction, InstructionFlag } from '../decoder/instruction.js'
import type { Op } from '../exec/op.js'
import { flagLocals } from './flag-locals.js'
import { SiteEmitter, TlbEmitter } from './memory-access.js'
import { type JitRuntime, runtime } from './runtime.js'
import { OP } from './sse-templates.js'
import { condExpr, condExprKnown, FLAGS, FlagUse, type Template, template } from './templates.js'

export type CompiledBlock = (c: Cpu, ops: Op[], budget: number) => number

let available = true

const BRANCHES = InstructionFlag.Call | InstructionFlag.Jump | InstructionFlag.Conditional

/**
 * A block whose last instruction is an inline branch that can go back to its
 * first: it loops inside its function while RIP comes back to its start. A
 * relative branch can when its target is the start; a ret when the return
 * address it pops is (a call inside the block to a function on its page that
 * returns to the block's start: the call-heavy loop's shape).
 */
function isSelfLoop(insns: readonly Instruction[]): boolean {
  const last = insns[insns.length - 1]
  if (template(last) === null) return false
  // Only a ret after a call in the block that returns to its start can come back there: any other
  // ret-ending block would pay the loop's bookkeeping for nothing.
  if ((last.flags & InstructionFlag.Ret) !== 0)
    return (
      (last.flags & InstructionFlag.FarBranch) === 0 &&
      insns.some((i) => (i.flags & InstructionFlag.Call) !== 0 && i.address + i.length === insns[0].address)
    )
  return (
    last.branchTarget === insns[0].address &&
    (last.flags & (InstructionFlag.Conditional | InstructionFlag.Jump)) !== 0 &&
    (last.flags & InstructionFlag.Relative) !== 0
  )
}

/**
 * Whether the arithmetic flags each instruction writes can be observed
 * (flag liveness, computed backwards). Anything outside the block may read
 * them, and so may a fault's handler (the flags of a faulting instruction's
 * predecessors are part of the precise state it sees) and every closure, so
 * flags are live at the block's end, at each exit, before each instruction
 * that may fault and before each closure call. An instruction that
 * overwrites all six without reading them makes them dead before it: the
 * flag update of a writer followed by such an overwrite, with none of the
 * above between, is left out.
 */
export function flagsLiveAfter(insns: readonly Instruction[], tpls: readonly (Template | null)[]): boolean[] {
  const n = insns.length
  const live = new Array<boolean>(n)
  let l = true
  for (let k = n - 1; k >= 0; k--) {
    const tpl = tpls[k]
    // A side exit after a branch inside the block (a direct jmp's is never taken: its target is the next instruction).
    if (k < n - 1 && (insns[k].flags & BRANCHES) !== 0 && !isDirectJump(insns[k], tpl)) l = true
    live[k] = l
    if (tpl === null || tpl.mayFault || tpl.flagUse === FlagUse.Read) l = true
    else if (tpl.flagUse === FlagUse.Write) l = false
  }
  return live
}

function isDirectJump(insn: Instruction, tpl: Template | null): boolean {
  return (
    tpl !== null &&
    (insn.flags & (InstructionFlag.Jump | InstructionFlag.Relative)) ===
      (InstructionFlag.Jump | InstructionFlag.Relative) &&
    (insn.flags & InstructionFlag.Conditional) === 0
  )
}

/** RSP's halves stay in Cpu.r: the stack helpers (push64, pop64, ret) read and write them there. */
const UNCACHED = new Set([8, 9])
const REG = /\br\[(\d+)\]/g
const REG_WRITE = /\br\[(\d+)\]=(?!=)/g

/**
 * Guest registers the block's inline code uses, held in JavaScript locals
 * (rN for Cpu.r[N]) for the whole function, so V8 keeps them in machine
 * registers across a loop's iterations instead of loading and storing the
 * typed array at every instruction. The array is brought up to date (the
 * written ones stored) wherever anything else can look at it: before every
 * return, before a closure call (and the locals reloaded after it), and on
 * a fault, in the catch that rethrows it; a template writes its registers
 * only after everything in it that can fault, so the locals then hold the
 * state before the faulting instruction, as a precise fault needs.
 */
interface RegisterLocals {
  /** Replaces r[N] in template code with the local. */
  rename(code: string): string
  declare: string
  store: string
  reload: string
}

function registerLocals(codes: readonly string[]): RegisterLocals | null {
  const used = new Set<number>()
  const written = new Set<number>()
  for (const code of codes) {
    for (const m of code.matchAll(REG)) used.add(Number(m[1]))
    for (const m of code.matchAll(REG_WRITE)) written.add(Number(m[1]))
    // An index that is not a constant could alias any local: keep this block on the array.
    if (/\br\[(?!\d+\])/.test(code)) return null
  }
  for (const k of UNCACHED) {
    used.delete(k)
    written.delete(k)
  }
  if (used.size === 0) return null
  const u = [...used].sort((a, b) => a - b)
  const w = [...written].sort((a, b) => a - b)
  return {
    rename: (code) => code.replace(REG, (m, n) => (used.has(Number(n)) ? `r${n}` : m)),
    declare: `let ${u.map((k) => `r${k}=r[${k}]`).join(',')};`,
    store: w.map((k) => `r[${k}]=r${k};`).join(''),
    reload: u.map((k) => `r${k}=r[${k}];`).join(''),
  }
}

const FOP_WRITE = /c\.fop=(?!=)([^;]*);/g

/**
 * The condition of each jcc and cmovcc, specialised where the lazy-flag kind
 * the flags' last writer in the block leaves is a constant in its code: the
 * test of Cpu.fop that condExpr makes at run time is made here instead.
 */
function knownConditions(
  insns: readonly Instruction[],
  tpls: readonly (Template | null)[],
  codes: string[],
): string[] {
  // The kind the last writer left when its code sets a constant one (pseudo kinds are negative), else null.
  let fop: number | null = null
  return codes.map((code, k) => {
    const tpl = tpls[k]
    if (tpl === null) {
      fop = null
      return code
    }
    const insn = insns[k]
    const jcc =
      (insn.map === 0 && insn.opcode >= 0x70 && insn.opcode <= 0x7f) ||
      (insn.map === 1 && insn.opcode >= 0x80 && insn.opcode <= 0x8f)
    const cmov = insn.map === 1 && insn.opcode >= 0x40 && insn.opcode <= 0x4f
    let out = code
    if ((jcc || cmov) && fop !== null) {
      const cc = insn.opcode & 15
      const known = condExprKnown(cc, fop)
      if (known !== null) out = code.split(condExpr(cc)).join(known)
    }
    const writes = [...code.matchAll(FOP_WRITE)]
    if (writes.length > 0) {
      const v = writes[writes.length - 1][1]
      fop = /^-?\d+$/.test(v) ? Number(v) : null
    } else if (tpl.flagUse === FlagUse.Write) fop = null
    return out
  })
}

/**
 * Source of the block function for these instructions (exposed for tests and
 * debugging). It returns how many instructions completed. A self-loop runs
 * its iterations inside the function while RIP comes back to its start and
 * the budget allows, so hot inner loops never return to the runner; Cpu.ld
 * counts the instructions of completed iterations for a fault mid-way.
 */
export function blockSource(insns: readonly Instruction[]): string {
  const loop = isSelfLoop(insns)
  const n = insns.length
  const done = loop ? 'done+' : ''
  // A loop's memory operands are access sites caching their page, other blocks probe the TLB
  // inline (memory-access.ts).
  const mem = loop ? new SiteEmitter() : new TlbEmitter()
  const tpls = insns.map((insn) => template(insn, mem))
  const live = flagsLiveAfter(insns, tpls)
  const codesWith = (pseudo: boolean) =>
    knownConditions(
      insns,
      tpls,
      tpls.map((tpl, k) => {
        if (tpl === null) return ''
        const flags = !live[k] ? '' : pseudo && tpl.pseudo !== undefined ? tpl.pseudo : (tpl.flags ?? '')
        return tpl.code.replace(FLAGS, flags)
      }),
    )
  let codes = codesWith(false)
  // Locals pay in a loop, where they stay in machine registers across iterations; around each
  // closure call they cost a store and a reload, so closure-heavy blocks stay on the array.
  const closures = tpls.filter((tpl) => tpl === null).length
  const regs = loop && closures * 8 <= n ? registerLocals(codes) : null
  // The lazy flags go into locals with the registers (flag-locals.ts), eager ones deferred.
  const fl = regs === null ? null : flagLocals
  if (fl !== null) codes = codesWith(true)
  const store = regs === null ? '' : regs.store + flagLocals.store
  const reload = regs === null ? '' : regs.reload + flagLocals.reload
  const rename = (code: string) => (regs === null ? code : flagLocals.rename(regs.rename(code)))
  const ret = (v: string) => `{${store}return ${v};}`
  // The faulting instruction's index: in a loop a local, given to Cpu.ci by the catch.
  const setCi = (k: number) => (loop ? `ci=${k};` : `c.ci=${k};`)
  const lines: string[] = []
  // In a closure, Cpu.r is the registers' home (inop): one that changes registers and then
  // throws (syscall, a trap) must not have them overwritten from the locals by the catch.
  const call = (k: number) =>
    regs === null ? `ops[${k}](c);` : `${store}inop=1;ops[${k}](c);inop=0;${reload}`
  insns.forEach((insn, k) => {
    const tpl = tpls[k]
    if (tpl === null) {
      lines.push(`${setCi(k)}${call(k)}if(c.blockExit)${ret(`${done}${k + 1}`)}`)
    } else {
      // A template's slow path may be the closure itself (OP).
      const code = rename(codes[k]).split(OP).join(call(k))
      lines.push(
        `${tpl.mayFault ? setCi(k) : ''}${code}${tpl.mayWrite ? `if(c.blockExit)${ret(`${done}${k + 1}`)}` : ''}`,
      )
    }
    // A branch the block continues after (see block.ts): anywhere else it goes leaves the block.
    if (k < n - 1 && (insn.flags & BRANCHES) !== 0)
      lines.push(`if(c.rip!==${insns[k + 1].address})${ret(`${done}${k + 1}`)}`)
  })
  if (loop) lines.push(`done+=${n};if(c.rip!==${insns[0].address}||done+${n}>budget)${ret('done')}`)
  else lines.push(ret(String(n)))
  const body = lines.join('\n')
  const locals = regs === null ? '' : `let inop=0;${regs.declare}${flagLocals.declare}`
  const head = `const r=c.r;let t=0;${loop ? 'let done=0,ci=0;' : ''}${mem.declare()}${locals}`
  if (!loop) return `${head}\n${body}`
  // A fault: the locals go back to the Cpu, the loop's completed iterations to Cpu.ld.
  return `${head}\ntry{\nfor(;;){\n${body}\n}\n}catch(e){${store === '' ? '' : `if(!inop){${store}}`}c.ld=done;c.ci=ci;throw e}`
}

/**
 * Block functions by source, shared by every machine in this JavaScript
 * realm. The source is all a block function depends on (addresses and
 * immediates are constants in it; the ops come in as an argument), so the
 * same code at the same address, in another process, another machine or a
 * later run, reuses the function V8 has already compiled and optimised
 * instead of parsing it again and warming a fresh copy up from the
 * interpreter. The strings are the functions' own sources, which V8 keeps
 * anyway. Bounded, since it outlives machines (a function with V8's code
 * and metadata for it is about 10 KiB): when full it starts again.
 */
const shared = new Map<string, CompiledBlock>()
const SHARED_MAX = 1 << 12

/** Forget every shared block function (a code cache's flush: V8 may then collect those no block holds). */
export function dropCompiledBlocks(): void {
  shared.clear()
}

/** Compile a block, or null where code generation is unavailable (e.g. a CSP without unsafe-eval). */
export function compileBlock(insns: readonly Instruction[]): CompiledBlock | null {
  if (!available) return null
  const src = blockSource(insns)
  const hit = shared.get(src)
  if (hit !== undefined) return hit
  try {
    // Strict: a sloppy function's call converts its receiver, a cost on every block entry.
    const make = new Function('rt', `'use strict';return function block(c, ops, budget) {\n${src}\n}`) as (
      rt: JitRuntime,
    ) => CompiledBlock
    const fn = make(runtime)
    if (shared.size >= SHARED_MAX) shared.clear()
    shared.set(src, fn)
    return fn
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new Error(`block compiler produced invalid code: ${e.message}\n${src}`)
    available = false
    return null
  }
}
