// Out of memory: the guest's memory is the machine's. A private writable
// mapping larger than all of it is refused (the default overcommit
// policy); running short while touching pages calls the guest's OOM
// killer, which kills the largest process with SIGKILL and says so in the
// kernel log, as Linux does. The host never runs out: the frames are a
// fixed pool.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'

const memhog = new Uint8Array(readFileSync(new URL('../fixtures/bin/memhog', import.meta.url)))
const MIB = 1024 * 1024

describe('out of memory', () => {
  it('mmap of more private writable memory than RAM is ENOMEM; less is granted', () => {
    const big = runGuest(memhog, ['/bin/memhog', 'big', '96'], { memorySize: 64 * MIB })
    expect(big.stdout).toBe('mmap 96 MiB: Out of memory\n')
    const fits = runGuest(memhog, ['/bin/memhog', 'big', '48'], { memorySize: 64 * MIB })
    expect(fits.stdout).toBe('mmap 48 MiB: ok\n')
  })

  it('a process touching more pages than there are is killed by the OOM killer (SIGKILL), with its report in dmesg', () => {
    const r = runGuest(memhog, ['/bin/memhog', 'touch', '0'], { memorySize: 48 * MIB })
    expect(r.status).toBe(128 + 9)
    // It got a good way before memory ran out: the pages it touched were really its own.
    const touched = [...r.stdout.matchAll(/touched (\d+) MiB/g)].map((m) => Number(m[1]))
    expect(touched.at(-1)).toBeGreaterThanOrEqual(24)
    expect(touched.at(-1)).toBeLessThan(48)
    const log = r.kernel.printk.text()
    expect(log).toMatch(/memhog invoked oom-killer/)
    const kill = log.match(/Out of memory: Killed process 1 \(memhog\) total-vm:(\d+)kB, anon-rss:(\d+)kB/)
    expect(kill).not.toBeNull()
    // Its resident set is most of memory.
    expect(Number(kill?.[2])).toBeGreaterThan(touched.at(-1)! * 1024)
  })

  it('the largest process is the victim: a child hogging memory dies, its parent lives on and sees SIGKILL', () => {
    const r = runGuest(memhog, ['/bin/memhog', 'family', '0'], { memorySize: 48 * MIB })
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/child killed by signal 9\n$/)
    expect(r.kernel.printk.text()).toMatch(/Out of memory: Killed process 2 \(memhog\)/)
    // Exactly one victim: the parent was never chosen.
    expect(r.kernel.printk.text().match(/Killed process/g)).toHaveLength(1)
  })

  it('after an OOM kill the memory is back: a second hog gets as far as the first, and the victim is each time the hog', () => {
    const r = runGuest(memhog, ['/bin/memhog', 'family', '0', '2'], { memorySize: 48 * MIB })
    expect(r.status).toBe(0)
    const runs = r.stdout.split('child killed by signal 9\n')
    expect(runs).toHaveLength(3)
    const reached = runs.slice(0, 2).map((out) => [...out.matchAll(/touched (\d+) MiB/g)].at(-1)?.[1])
    expect(reached[0]).toBeDefined()
    expect(reached[1]).toBe(reached[0])
    expect(r.kernel.printk.text()).toMatch(/Killed process 2 \(memhog\)[\s\S]*Killed process 3 \(memhog\)/)
  })
})
