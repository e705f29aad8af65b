// The kernel on the guest image: boot on several vCPUs, a program's system
// calls through entry_SYSCALL_64, kallsyms on the real image, the die
// notifier chain in guest code.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Kernel, NOTIFY_DONE } from '../src/index.js'
import { guestImage, runGuest } from './support/run.js'
import { TINY_BASE, tinyElf } from './support/tiny-elf.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/bin/${name}`, import.meta.url)))

describe('kernel', () => {
  it.each([1, 2, 4])('boots %i vCPUs: each runs start_kernel and reports online', (cpus) => {
    const k = new Kernel({ image: guestImage(), cpus, memorySize: 64 * 1024 * 1024 })
    k.boot()
    expect(k.printk.text()).toMatch(/Linux version/)
    expect(new Set(k.machine.cpus.map((c) => c.gsBase)).size).toBe(cpus)
    for (const c of k.machine.cpus) {
      expect(c.idtLimit).toBe(256 * 16 - 1)
      expect(c.lstar).toBe(k.symbol('entry_SYSCALL_64'))
      // start_kernel loaded this CPU's GS base (per-CPU area), GDT and TSS.
      expect(c.gsBase).toBeLessThan(0)
      expect(c.trBase).not.toBe(0)
      expect(c.gdtLimit).toBeGreaterThan(0)
    }
  })

  it('runs a static musl program: write(2) reaches sys_write and exit_group ends it', () => {
    const r = runGuest(fixture('hello'), ['hello'])
    expect(r.stdout).toBe('hello, world\n')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('kallsyms resolves names and addresses of the real image', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 32 * 1024 * 1024 })
    const doFork = k.kallsyms.lookupName('do_fork')!
    expect(doFork).toBeLessThan(0) // kernel half
    expect(k.kallsyms.format(doFork)).toMatch(/^do_fork\+0x0\/0x[0-9a-f]+$/)
    expect(k.kallsyms.format(doFork + 4)).toMatch(/^do_fork\+0x4\//)
    expect(k.kallsyms.functionAt(doFork + 1)?.name).toBe('do_fork')
    expect(k.image.exceptionTable.length).toBeGreaterThan(0)
    for (const e of k.image.exceptionTable) {
      expect(e.insn).toBeGreaterThanOrEqual(k.image.textStart)
      expect(e.fixup).toBeLessThan(k.image.textEnd)
    }
    expect(k.image.blacklist).toContain(k.symbol('notifier_call_chain'))
  })

  it('walks the die notifier chain in guest code: a host notifier sees the int3 of a user program', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
    const seen: number[] = []
    k.traps.registerDieNotifier((val, _regs, trapnr) => {
      seen.push(val, trapnr)
      return NOTIFY_DONE
    })
    k.vfs.writeFile('/bin/hello', fixture('hello'))
    k.boot()
    // Patch the program's entry with int3 once loaded: the notifier runs, then the default action kills it with SIGTRAP.
    const task = k.spawn('/bin/hello', ['hello'])
    // As ptrace's POKETEXT would: the page becomes the process's own copy (the page cache keeps the original).
    task.mm.write(task.getReg('ip'), Uint8Array.of(0xcc))
    const { exit } = k.run(10_000_000)
    expect(seen).toEqual([2, 3]) // DIE_INT3, X86_TRAP_BP
    expect(exit?.signal).toBe(5)
    expect(exit?.status).toBe(133)
  })

  it('a fault that kills leaves a show_unhandled_signals line in dmesg', () => {
    // mov rax, [0x10]: a user read of an unmapped page.
    const r = runGuest(tinyElf([0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0]), ['/bin/crash'])
    expect(r.status).toBe(139)
    const ip = (TINY_BASE + 120).toString(16)
    expect(r.kernel.printk.text()).toMatch(
      new RegExp(`crash\\[1\\]: segfault at 10 ip ${ip} sp 7fffffff[0-9a-f]{4} error 4$`, 'm'),
    )
  })
})

describe('page cache', () => {
  it('processes running the same file share its text frames; a private write copies for the writer only', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
    k.vfs.writeFile('/bin/hello', fixture('hello'))
    k.boot()
    const a = k.spawn('/bin/hello', ['hello'])
    const b = k.spawn('/bin/hello', ['hello'])
    const entry = a.getReg('ip')
    const page = Math.floor(entry / 4096) * 4096
    const fa = a.mm.space.lookup(page)!
    const fb = b.mm.space.lookup(page)!
    expect(fa.frame).toBe(fb.frame)
    expect(fa.flags.writable).toBe(false)
    // A private write (what a debugger or uprobes does): copy-on-write in a only.
    expect(a.mm.handleFault(entry, true, false)).toBe(false) // text is not writable...
    a.mm.protect(page, page + 4096, 7) // ...until mprotect(PROT_READ|PROT_WRITE|PROT_EXEC)
    expect(a.mm.handleFault(entry, true, false)).toBe(true)
    const copy = a.mm.space.lookup(page)!.frame
    expect(copy).not.toBe(fb.frame)
    expect(b.mm.space.lookup(page)!.frame).toBe(fb.frame)
    expect(k.machine.memory.readBytes(copy * 4096, 4096)).toEqual(
      k.machine.memory.readBytes(fb.frame * 4096, 4096),
    )
    // Both still run correctly.
    const { exit } = k.run(50_000_000)
    expect(exit?.status).toBe(0)
  })
})
