// The scheduler: user code is preempted by the timer; job control stops and
// continues a process; wait reports it.

import { describe, expect, it } from 'vitest'
import { Kernel } from '../src/index.js'
import { readUserU64 } from '../src/mm/user-memory.js'
import { guestImage } from './support/run.js'
import { tinyElf } from './support/tiny-elf.js'

/** inc qword [rsp-8] ; jmp back: pure user code, never entering the kernel. */
const COUNTER = tinyElf([0x48, 0xff, 0x44, 0x24, 0xf8, 0xeb, 0xf9])

function kernelWith(n: number, cpus = 1): { k: Kernel; tasks: ReturnType<Kernel['spawn']>[]; sps: number[] } {
  const k = new Kernel({ image: guestImage(), cpus, memorySize: 64 * 1024 * 1024, tickCycles: 10_000 })
  k.vfs.writeFile('/bin/count', COUNTER)
  k.boot()
  const tasks = []
  const sps = []
  for (let i = 0; i < n; i++) {
    const t = k.spawn('/bin/count', ['count'])
    tasks.push(t)
    sps.push(t.getReg('sp'))
  }
  return { k, tasks, sps }
}

const count = (t: ReturnType<Kernel['spawn']>, sp: number) => readUserU64(t.mm, sp - 8)

describe('scheduler', () => {
  it('the timer preempts user code: two endless loops on one vCPU both make progress', () => {
    const { k, tasks, sps } = kernelWith(2)
    k.run(500_000)
    const a = count(tasks[0], sps[0])
    const b = count(tasks[1], sps[1])
    expect(a).toBeGreaterThan(10_000)
    expect(b).toBeGreaterThan(10_000)
    // Round-robin: neither gets more than twice the other's share.
    expect(Math.max(a, b) / Math.min(a, b)).toBeLessThan(2)
  })

  it('SIGSTOP stops a process (it makes no progress) and SIGCONT resumes it', () => {
    const { k, tasks, sps } = kernelWith(2)
    k.run(200_000)
    const cpu = k.machine.cpus[0]
    k.signals.sendSignal(cpu, tasks[1], { signo: 19, code: 0 })
    k.run(200_000)
    expect(tasks[1].state).toBe('stopped')
    const frozen = count(tasks[1], sps[1])
    k.run(300_000)
    expect(count(tasks[1], sps[1])).toBe(frozen)
    k.signals.sendSignal(cpu, tasks[1], { signo: 18, code: 0 })
    k.run(300_000)
    expect(count(tasks[1], sps[1])).toBeGreaterThan(frozen)
  })

  it('is deterministic: the same run twice gives the same counts', () => {
    const once = () => {
      const { k, tasks, sps } = kernelWith(3, 2)
      k.run(400_000)
      return tasks.map((t, i) => count(t, sps[i]))
    }
    expect(once()).toEqual(once())
  })
})

describe('FPU/SSE context', () => {
  /** movd xmm0, P ; spin 200k iterations (preempted many times) ; exit(movd xmm0) */
  const keeper = (p: number) =>
    tinyElf([
      0xb8,
      p,
      0,
      0,
      0,
      0x66,
      0x0f,
      0x6e,
      0xc0,
      0xb9,
      0x40,
      0x0d,
      0x03,
      0x00,
      0xff,
      0xc9,
      0x75,
      0xfc,
      0x66,
      0x0f,
      0x7e,
      0xc7,
      0xb8,
      0xe7,
      0,
      0,
      0,
      0x0f,
      0x05,
    ])

  it('each process keeps its own XMM registers across context switches on one vCPU', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024, tickCycles: 10_000 })
    k.vfs.writeFile('/bin/a', keeper(11))
    k.vfs.writeFile('/bin/b', keeper(22))
    k.boot()
    const a = k.spawn('/bin/a', ['a'])
    const b = k.spawn('/bin/b', ['b'])
    k.run(5_000_000)
    expect([a.state, b.state]).toEqual(['zombie', 'zombie'])
    expect([a.exitCode, b.exitCode]).toEqual([11, 22])
  })

  it('each process keeps its own x87 register stack across context switches', () => {
    // push P ; fild dword [rsp] ; spin ; fistp dword [rsp] ; pop rdi ; exit_group(rdi)
    const x87keeper = (p: number) =>
      tinyElf([
        0xb8,
        p,
        0,
        0,
        0,
        0x50,
        0xdb,
        0x04,
        0x24,
        0xb9,
        0x40,
        0x0d,
        0x03,
        0x00,
        0xff,
        0xc9,
        0x75,
        0xfc,
        0xdb,
        0x1c,
        0x24,
        0x5f,
        0xb8,
        0xe7,
        0,
        0,
        0,
        0x0f,
        0x05,
      ])
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024, tickCycles: 10_000 })
    k.vfs.writeFile('/bin/a', x87keeper(11))
    k.vfs.writeFile('/bin/b', x87keeper(22))
    k.boot()
    const a = k.spawn('/bin/a', ['a'])
    const b = k.spawn('/bin/b', ['b'])
    k.run(5_000_000)
    expect([a.exitCode, b.exitCode]).toEqual([11, 22])
  })
})
