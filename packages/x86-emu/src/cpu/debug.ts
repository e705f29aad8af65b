// Debug registers: DR0-DR3 linear breakpoints, DR6 status, DR7 control.
//
// Execution breakpoints are checked by the executor before each instruction
// while any is enabled (the CPU then runs one instruction per block). Data
// breakpoints keep their pages out of the TLB so every access to them takes
// the slow path, which checks the ranges and raises #DB after the access.

import type { Cpu } from './cpu.js'
import { CpuFault, Vector } from './exceptions.js'
import { DR6_B0, DR6_FIXED, RF } from './registers.js'

export interface Breakpoint {
  index: number
  addr: number
  /** 0 execute, 1 write, 3 read/write (2 is I/O, unsupported). */
  rw: number
  len: number
}

const LEN = [1, 2, 8, 4]

/** The enabled breakpoints DR7 describes. */
export function enabledBreakpoints(c: Cpu): Breakpoint[] {
  const out: Breakpoint[] = []
  for (let i = 0; i < 4; i++) {
    if (((c.dr7 >>> (2 * i)) & 3) === 0) continue
    const rw = (c.dr7 >>> (16 + 4 * i)) & 3
    const len = rw === 0 ? 1 : LEN[(c.dr7 >>> (18 + 4 * i)) & 3]
    out.push({ index: i, addr: c.dr[i] - (rw === 0 ? 0 : c.dr[i] % len), rw, len })
  }
  return out
}

/** Re-arm after a write to DR0-3/DR7: data breakpoints change which pages may be cached. */
export function updateDebugState(c: Cpu): void {
  const hadData = c.dataBreakpoints
  const bps = enabledBreakpoints(c)
  const data = bps.filter((b) => b.rw !== 0)
  const exec = bps.filter((b) => b.rw === 0)
  c.execBreakpoints = exec.map((b) => b.addr)
  c.debugTraps = bps.length
  c.dataBreakpoints = data.length > 0
  if (data.length > 0) {
    const pages = new Set(data.map((b) => Math.floor(b.addr / 4096)))
    c.watchesPage = (vpn) => pages.has(vpn)
    c.checkDataBreakpoint = (addr, size, write) => {
      for (const b of data) {
        if (b.rw === 1 && !write) continue
        if (addr < b.addr + b.len && b.addr < addr + size) c.pendingDataHits |= DR6_B0 << b.index
      }
    }
  }
  // Data breakpoints keep their pages out of the TLB: flush only when some are or were armed.
  if (data.length > 0 || hadData) c.flushTlb()
}

/** Before executing at `rip`: an enabled execution breakpoint there raises #DB (a fault), unless RF is set. */
export function checkExecBreakpoint(c: Cpu, rip: number): void {
  if ((c.eflags & RF) !== 0) return
  const bps = c.execBreakpoints
  for (let i = 0; i < bps.length; i++) {
    if (bps[i] === rip) {
      const index = enabledBreakpoints(c).find((b) => b.rw === 0 && b.addr === rip)!.index
      c.dr6 = (c.dr6 & ~0xf) | DR6_FIXED | (DR6_B0 << index)
      throw new CpuFault(Vector.DB, 0, 0, `execution breakpoint ${index}`)
    }
  }
}
