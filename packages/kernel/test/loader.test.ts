// The ELF checks and the initial process image (binfmt_elf's job).

import { readFileSync } from 'node:fs'
import { AddressSpace, Machine } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { checkExecutable, ElfError, interpreterOf, loadExecutable, Mm, STACK_TOP } from '../src/index.js'
import { copyFromUser, readUserU64, strncpyFromUser } from '../src/mm/user-memory.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../x86-emu/native/workloads/${name}`, import.meta.url)))

function elfHeader(patch: (b: Uint8Array, v: DataView) => void): Uint8Array {
  const b = new Uint8Array(64)
  const v = new DataView(b.buffer)
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1])
  v.setUint16(16, 2, true)
  v.setUint16(18, 62, true)
  patch(b, v)
  return b
}

describe('checkExecutable', () => {
  it.each([
    ['garbage', new Uint8Array([1, 2, 3]), /not an ELF file/],
    ['bad magic', new TextEncoder().encode('#!/bin/sh\necho hi\n'.padEnd(80)), /bad magic/],
    ['32-bit', elfHeader((b) => (b[4] = 1)), /32-bit/],
    ['other machine', elfHeader((_b, v) => v.setUint16(18, 183, true)), /not an x86-64/],
    ['no segments', elfHeader(() => {}), /no loadable segments/],
    [
      'segment past the end',
      elfHeader((_b, v) => {
        v.setBigUint64(32, 64n, true)
        v.setUint16(54, 56, true)
        v.setUint16(56, 1, true)
      }),
      /program headers out of range/,
    ],
  ])('rejects %s with a one-line reason', (_name, bytes, message) => {
    expect(() => checkExecutable(bytes)).toThrow(ElfError)
    expect(() => checkExecutable(bytes)).toThrow(message)
  })

  it('accepts a dynamically linked executable and names its interpreter (PT_INTERP)', () => {
    let bin: Uint8Array | null = null
    for (const p of ['/usr/bin/true', '/bin/true']) {
      try {
        bin = new Uint8Array(readFileSync(p))
        break
      } catch {}
    }
    if (!bin) return
    expect(interpreterOf(checkExecutable(bin), bin)).toBe('/lib64/ld-linux-x86-64.so.2')
    expect(interpreterOf(checkExecutable(fixture('intmix-native')), fixture('intmix-native'))).toBeNull()
  })

  it('accepts a static executable', () => {
    expect(checkExecutable(fixture('intmix-native')).entry).toBeGreaterThan(0)
  })
})

describe('loadExecutable', () => {
  it('builds the System V initial stack: argc, argv, envp, auxv', () => {
    const m = new Machine({ memorySize: 64 * 1024 * 1024 })
    const kernel = new AddressSpace(m.memory, m.frames)
    const mm = new Mm(m.memory, m.frames, kernel)
    const prog = loadExecutable(
      mm,
      { bytes: fixture('intmix-native') },
      { filename: '/bin/intmix', argv: ['intmix', '3'], envp: ['A=1', 'B=2'] },
      m.cpus[0],
    )
    expect(prog.sp % 16).toBe(0)
    expect(prog.sp).toBeLessThan(STACK_TOP)
    expect(readUserU64(mm, prog.sp)).toBe(2)
    const str = (addr: number) => strncpyFromUser(mm, readUserU64(mm, addr), 100)
    expect(str(prog.sp + 8)).toBe('intmix')
    expect(str(prog.sp + 16)).toBe('3')
    expect(readUserU64(mm, prog.sp + 24)).toBe(0)
    expect(str(prog.sp + 32)).toBe('A=1')
    expect(str(prog.sp + 40)).toBe('B=2')
    expect(readUserU64(mm, prog.sp + 48)).toBe(0)
    const auxv = new Map<number, number>()
    for (let p = prog.sp + 56; ; p += 16) {
      const type = readUserU64(mm, p)
      if (type === 0) break
      auxv.set(type, readUserU64(mm, p + 8))
    }
    expect(auxv.get(6)).toBe(4096) // AT_PAGESZ
    expect(auxv.get(9)).toBe(prog.entry) // AT_ENTRY
    expect(strncpyFromUser(mm, auxv.get(31)!, 100)).toBe('/bin/intmix') // AT_EXECFN
    expect(copyFromUser(mm, auxv.get(25)!, 16).length).toBe(16) // AT_RANDOM
    // AT_PHDR points at the program headers as loaded: the first one is the file's.
    const phdr = copyFromUser(mm, auxv.get(3)!, 4)
    expect(new DataView(phdr.buffer).getUint32(0, true)).toBe(1) // PT_LOAD
    // The text is in place.
    expect(copyFromUser(mm, prog.entry, 4).length).toBe(4)
  })
})

describe('Mm', () => {
  it('demand-zeroes pages and copies on write after fork', () => {
    const m = new Machine({ memorySize: 64 * 1024 * 1024 })
    const kernel = new AddressSpace(m.memory, m.frames)
    const parent = new Mm(m.memory, m.frames, kernel)
    parent.addVma({ start: 0x10000, end: 0x20000, prot: 3, kind: 'anon', name: '', shared: false })
    expect(parent.space.lookup(0x10000)).toBeNull()
    expect(parent.handleFault(0x10010, true, false)).toBe(true)
    parent.write(0x10000, Uint8Array.of(1, 2, 3))
    const child = parent.fork(kernel)
    const frame = parent.space.lookup(0x10000)!.frame
    expect(child.space.lookup(0x10000)!.frame).toBe(frame)
    expect(parent.space.lookup(0x10000)!.flags.writable).toBe(false)
    expect(m.frames.refCount(frame)).toBe(2)
    // The child writes: it gets its own copy; the parent keeps the original.
    expect(child.handleFault(0x10000, true, false)).toBe(true)
    const childFrame = child.space.lookup(0x10000)!.frame
    expect(childFrame).not.toBe(frame)
    expect(copyFromUser(child, 0x10000, 3)).toEqual(Uint8Array.of(1, 2, 3))
    expect(m.frames.refCount(frame)).toBe(1)
    // Outside any VMA, or a write to read-only memory: SIGSEGV.
    expect(parent.handleFault(0x30000, false, false)).toBe(false)
    parent.addVma({ start: 0x40000, end: 0x41000, prot: 1, kind: 'anon', name: '', shared: false })
    expect(parent.handleFault(0x40000, true, false)).toBe(false)
    const before = m.frames.used
    child.release()
    expect(m.frames.used).toBeLessThan(before)
  })
})
