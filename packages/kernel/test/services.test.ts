// text_poke, stop_machine, synchronize_sched and delayed work, on a kernel
// with programs running on several vCPUs.

import { describe, expect, it } from 'vitest'
import { Kernel } from '../src/index.js'
import { guestImage } from './support/run.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

/** A program that never exits: getpid in a loop, so it is in and out of the kernel all the time. */
const SPINNER = tinyElf([...syscall(39), 0xeb, 0xf7])

function busyKernel(cpus: number): Kernel {
  const k = new Kernel({ image: guestImage(), cpus, memorySize: 64 * 1024 * 1024, tickCycles: 20_000 })
  k.vfs.writeFile('/bin/spin', SPINNER)
  k.boot()
  for (let i = 0; i < cpus; i++) k.spawn('/bin/spin', ['spin'])
  k.run(200_000)
  return k
}

describe('kernel services', () => {
  it('text_poke patches kernel text through the alias; every vCPU then runs the new bytes', () => {
    const k = busyKernel(2)
    const target = k.symbol('do_syscall_64')
    const original = k.machine.memory.readBytes(target + 0x80000000, 16)
    const seen: number[] = []
    k.traps.registerDieNotifier((val, regs, trapnr, cpu) => {
      if (val !== 2) return 0 // only DIE_INT3 (page faults walk the chain too)
      seen.push(cpu.id)
      expect(trapnr).toBe(3)
      // Like a kprobe without single-stepping: restore the byte and retry the instruction.
      k.services.textPoke(target, original.subarray(0, 1))
      k.frame(regs).set('ip', target)
      return 0x8001 // NOTIFY_STOP
    })
    const old = k.services.textPoke(target, [0xcc])
    expect(old[0]).toBe(original[0])
    k.run(100_000)
    expect(seen.length).toBe(1)
    // The programs went on making syscalls through the restored function.
    expect(k.machine.memory.readBytes(target + 0x80000000, 16)).toEqual(original)
  })

  it('stop_machine holds every other vCPU at a safe point (user mode or idle) while fn runs', () => {
    const k = busyKernel(3)
    let hadToWait = 0
    for (let round = 0; round < 40; round++) {
      k.run(1_000 + round * 37)
      if (k.machine.cpus.some((c) => !k.services.quiescent(c))) hadToWait++
      const states = k.services.stopMachine(() => k.machine.cpus.map((c) => k.services.quiescent(c)))
      expect(states).toEqual([true, true, true])
    }
    // Some rounds found a vCPU inside the kernel: stop_machine had to bring it out first.
    expect(hadToWait).toBeGreaterThan(0)
  })

  it('synchronize_sched returns only after each vCPU left the kernel', () => {
    const k = busyKernel(2)
    // Stop a CPU in the middle of a syscall (kernel mode, not idle).
    let stopped = false
    for (let i = 0; i < 10_000 && !stopped; i++) {
      k.machine.runCpu(k.machine.cpus[1], 1)
      stopped = k.machine.cpus[1].cpl === 0 && !k.services.quiescent(k.machine.cpus[1])
    }
    expect(stopped).toBe(true)
    const before = k.machine.cpus[1].instructions
    k.services.synchronizeSched()
    expect(k.services.quiescent(k.machine.cpus[1])).toBe(true)
    expect(k.machine.cpus[1].instructions).toBeGreaterThan(before)
  })

  it('delayed work runs from the timer once its jiffies have passed, in order', () => {
    const k = busyKernel(1)
    const ran: string[] = []
    const start = k.jiffies
    k.services.scheduleDelayedWork(() => ran.push(`b@${k.jiffies - start}`), 5)
    k.services.scheduleDelayedWork(() => ran.push(`a@${k.jiffies - start}`), 2)
    k.run(20_000 * 10)
    expect(ran).toEqual(['a@2', 'b@5'])
    expect(k.services.pendingWork).toBe(0)
  })
})
