// Copy-on-write built from what the machine gives a system above it: a
// shared read-only frame, the #PF its first write raises (error code with
// W|P|U), frame reference counts, a page-table edit and invlpg.

import { describe, expect, it } from 'vitest'
import { AddressSpace, Vector } from '../src/index.js'
import { le32, Rig, USER_CODE } from './support/rig.js'

const SHARED = 0x900000

describe('copy-on-write from write protection', () => {
  it('a write to a shared read-only page copies it for the writer only', () => {
    const r = new Rig({ cpus: 2, quantum: 50 })
    const m = r.machine
    // Two address spaces sharing one frame read-only (as after fork), kernel half shared.
    const parent = r.space
    const child = new AddressSpace(m.memory, m.frames)
    child.shareKernelHalf(parent)
    const frame = m.frames.alloc()
    m.memory.write32(frame * 4096, 0x11111111)
    parent.map(SHARED, frame, { user: true, writable: false, nx: true })
    m.frames.get(frame)
    child.map(SHARED, frame, { user: true, writable: false, nx: true })
    expect(m.frames.refCount(frame)).toBe(2)
    // Both run: mov dword [SHARED], esi ; jmp $   (esi differs per CPU)
    const code = [0x89, 0x34, 0x25, ...le32(SHARED), 0xeb, 0xfe]
    r.load(USER_CODE, code, { user: true })
    const codeMapping = parent.lookup(USER_CODE)!
    m.frames.get(codeMapping.frame)
    child.map(USER_CODE, codeMapping.frame, { user: true })
    child.map(0x7ff000 - 4096, m.frames.alloc(), { user: true, writable: true, nx: true })
    r.enterUser(0, USER_CODE)
    r.enterUser(1, USER_CODE)
    m.cpus[1].setCr3(child.root)
    m.cpus[0].setReg(6, 0xaaaa)
    m.cpus[1].setReg(6, 0xbbbb)

    let copies = 0
    m.trapHandler = (cpu, ev) => {
      if (ev.vector !== Vector.PF || ev.errorCode !== 0b111) return 'stop'
      // The copy-on-write handler: give this space its own frame, keep the other's.
      const space = cpu.cr3 === parent.root ? parent : child
      const page = Math.floor(ev.address / 4096) * 4096
      const old = space.lookup(page)!
      if (m.frames.refCount(old.frame) > 1) {
        const copy = m.frames.alloc()
        m.memory.writeBytes(copy * 4096, m.memory.readBytes(old.frame * 4096, 4096))
        m.frames.put(old.frame)
        space.map(page, copy, { ...old.flags, writable: true })
        copies++
      } else {
        space.protect(page, { writable: true })
      }
      cpu.invlpg(page)
      return 'handled' // RIP is still the faulting mov: it runs again
    }
    m.run({ maxInstructions: 1000 })
    expect(copies).toBe(1) // the second writer finds itself the last user and just regains write access
    const pf = parent.lookup(SHARED)!.frame
    const cf = child.lookup(SHARED)!.frame
    expect(pf).not.toBe(cf)
    expect(m.memory.read32(pf * 4096)).toBe(0xaaaa)
    expect(m.memory.read32(cf * 4096)).toBe(0xbbbb)
    expect(m.frames.refCount(frame)).toBe(1)
  })

  it('code written by one vCPU is what another vCPU executes next', () => {
    const r = new Rig({ cpus: 2, quantum: 5 })
    const m = r.machine
    // CPU 0 spins on: mov eax, 1 ; jmp back  (the immediate lives at USER_CODE+1)
    // CPU 1 patches the immediate to 2 once: mov byte [USER_CODE+1], 2 ; jmp $
    r.load(USER_CODE, [0xb8, ...le32(1), 0xeb, 0xf9], { user: true, writable: true })
    r.load(USER_CODE + 0x100, [0xc6, 0x04, 0x25, ...le32(USER_CODE + 1), 0x02, 0xeb, 0xfe], {
      user: true,
      writable: true,
    })
    r.enterUser(0, USER_CODE)
    r.enterUser(1, USER_CODE + 0x100)
    m.run({ maxInstructions: 200 })
    expect(m.cpus[0].getReg(0)).toBe(2n)
    expect(m.codeCache.invalidations).toBeGreaterThan(0)
  })
})
