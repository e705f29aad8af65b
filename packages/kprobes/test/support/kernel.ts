// A booted guest kernel with user programs that keep entering it.

import { readFileSync } from 'node:fs'
import { imagePhys, Kernel } from '@probekit/kernel'
import { decode, type Instruction } from '@probekit/x86-emu'
import { syscall, tinyElf } from './tiny-elf.js'

export const guestImage = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../../../kernel/guest/vmlinux', import.meta.url)))

/** getpid in a loop: do_syscall_64 → (jump table) → sys_ni_host, over and over. */
export const SPINNER = tinyElf([...syscall(39), 0xeb, 0xf7])

/** fork once (do_fork), then parent and child both spin on getpid. */
export const FORKER = tinyElf([...syscall(57), ...syscall(39), 0xeb, 0xf7])

const NO_SUCH_FILE = [...new TextEncoder().encode('/no/such/file'), 0]
/** open("/no/such/file", O_RDONLY) in a loop: do_sys_open fails with -ENOENT every time. */
// biome-ignore format: one instruction per line
export const BAD_OPENER = tinyElf([
  0x48, 0x8d, 0x3d, 11, 0, 0, 0, // lea rdi, [rip + 11] → the path
  0x31, 0xf6, // xor esi, esi
  ...syscall(2),
  0xeb, 0xee, // jmp back to the lea
  ...NO_SUCH_FILE,
])

/** write(1, 0x10000000, 16) from an unmapped address in a loop: copy_from_user faults, -EFAULT. */
export const BAD_WRITER = tinyElf([
  0xbf,
  1,
  0,
  0,
  0, // mov edi, 1
  0xbe,
  0,
  0,
  0,
  0x10, // mov esi, 0x10000000
  0xba,
  16,
  0,
  0,
  0, // mov edx, 16
  ...syscall(1),
  0xeb,
  0xe8, // jmp back to mov edi
])

export function bootKernel(cpus = 1, programs: Uint8Array[] = [SPINNER]): Kernel {
  const k = new Kernel({ image: guestImage(), cpus, memorySize: 64 * 1024 * 1024, tickCycles: 20_000 })
  for (const [i, p] of programs.entries()) k.vfs.writeFile(`/bin/p${i}`, p)
  k.boot()
  for (let i = 0; i < programs.length; i++) k.spawn(`/bin/p${i}`, [`p${i}`])
  return k
}

/** The whole of kernel text as it is in memory now. */
export function textSnapshot(k: Kernel): Uint8Array {
  return k.machine.memory.readBytes(imagePhys(k.image.textStart), k.image.textEnd - k.image.textStart)
}

export function textByte(k: Kernel, addr: number): number {
  return k.machine.memory.readBytes(imagePhys(addr), 1)[0]
}

/** A kernel function's instructions, decoded from its start (call before arming probes in it). */
export function functionInsns(k: Kernel, name: string): Instruction[] {
  const start = k.symbol(name)
  const size = k.kallsyms.lookup(start)?.symbol.size ?? 0
  const bytes = k.machine.memory.readBytes(imagePhys(start), size)
  const out: Instruction[] = []
  for (let off = 0; off < size; ) {
    const insn = decode(bytes, start + off, off)
    out.push(insn)
    off += insn.length
  }
  return out
}

/** The first instruction of a kernel function that matches (tests name instructions, not offsets). */
export function findInsn(k: Kernel, name: string, match: (insn: Instruction) => boolean): Instruction {
  const insn = functionInsns(k, name).find(match)
  if (!insn) throw new Error(`no such instruction in ${name}`)
  return insn
}

/** A direct branch's target. */
export function relTarget(insn: Instruction): number {
  const op = insn.operands[0]
  if (op?.kind !== 'rel') throw new Error(`${insn.mnemonic} has no relative target`)
  return op.target
}

/** do_syscall_64's `call sys_ni_host`: the default case every getpid goes through. */
export function callSysNiHost(k: Kernel): Instruction {
  const target = k.symbol('sys_ni_host')
  return findInsn(k, 'do_syscall_64', (i) => i.mnemonic === 'call' && relTarget(i) === target)
}
