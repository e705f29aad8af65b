// What the kernel does not implement is reported by name and reaches the
// program as Linux would deliver it: an unknown system call returns -ENOSYS
// (number and name in the log), an instruction the emulator lacks raises #UD
// → SIGILL (bytes and address in the log). ud2, #UD by definition, is not
// reported as missing. Where the host is x86-64 Linux the same tiny programs
// run natively as the oracle for the status.

import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'
import { movEdi, syscall, TINY_BASE, tinyElf } from './support/tiny-elf.js'

/** syscall nr, then exit_group(-rax): the status is the errno. */
const callAndExitWithErrno = (nr: number) =>
  tinyElf([...syscall(nr), 0x89, 0xc7, 0xf7, 0xdf, ...syscall(231)]) // mov edi, eax ; neg edi
/** The instruction, then exit_group(0). */
const runInstruction = (bytes: number[]) => tinyElf([...bytes, ...movEdi(0), ...syscall(231)])
const CODE = TINY_BASE + 64 + 56

const onHost = process.platform === 'linux' && process.arch === 'x64'
function nativeStatus(prog: Uint8Array): number | string | null {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-unimpl-'))
  try {
    const path = join(dir, 'prog')
    writeFileSync(path, prog)
    chmodSync(path, 0o755)
    const r = spawnSync(path, [], { stdio: 'ignore' })
    return r.signal ?? r.status
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('unimplemented system calls', () => {
  it('return -ENOSYS and are logged with number and name', () => {
    for (const [nr, name] of [
      [1000, 'syscall_1000'],
      [29, 'shmget'],
    ] as const) {
      const r = runGuest(callAndExitWithErrno(nr), ['t'])
      expect(r.status).toBe(38)
      expect([...r.kernel.unimplemented.keys()]).toEqual([nr])
      expect(r.kernel.printk.text()).toContain(`unimplemented syscall ${nr} (${name}) called by t`)
    }
  })

  it.runIf(onHost)('natively an unknown syscall is ENOSYS too', () => {
    expect(nativeStatus(callAndExitWithErrno(1000))).toBe(38)
  })
})

describe('unimplemented instructions', () => {
  it('raise SIGILL and are logged with mnemonic, bytes and address', () => {
    const r = runGuest(runInstruction([0x0f, 0xc7, 0xf0]), ['t']) // rdrand eax
    expect(r.status).toBe(128 + 4)
    const what = `unimplemented instruction 'rdrand' (0f c7 f0) at 0x${CODE.toString(16).padStart(16, '0')}`
    expect([...r.kernel.unimplementedInstructions.keys()]).toEqual([what])
    expect(r.kernel.printk.text()).toContain(what)
  })

  it('ud2 raises SIGILL as on hardware and is not reported as missing', () => {
    const r = runGuest(runInstruction([0x0f, 0x0b]), ['t'])
    expect(r.status).toBe(128 + 4)
    expect(r.kernel.unimplementedInstructions.size).toBe(0)
    if (onHost) expect(nativeStatus(runInstruction([0x0f, 0x0b]))).toBe('SIGILL')
  })
})
