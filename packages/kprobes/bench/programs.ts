// Guest user programs shared by the benchmark and the SMP / property tests.

import { syscall, tinyElf } from '../test/support/tiny-elf.js'

/**
 * getpid once (remember the pid in r13d), then `iterations` times: getpid, check
 * it returned the same pid (else exit(1)); then exit(0). Exactly iterations + 2
 * syscalls, each one entry into do_syscall_64. iterations = 0: loop forever.
 */
export function getpidLoop(iterations: number): Uint8Array {
  const n = iterations
  const count = n > 0 ? [0x41, 0xff, 0xcc, 0x75, 0xef] : [0x0f, 0x1f, 0x00, 0xeb, 0xef] // dec r12d; jnz | nop; jmp
  return tinyElf([
    ...syscall(39), // 0: getpid
    0x41,
    0x89,
    0xc5, // 7: mov r13d, eax
    0x41,
    0xbc,
    n & 0xff,
    (n >> 8) & 0xff,
    (n >> 16) & 0xff,
    (n >> 24) & 0xff, // 10: mov r12d, n
    ...syscall(39), // 16: loop: getpid
    0x44,
    0x39,
    0xe8, // 23: cmp eax, r13d
    0x75,
    0x11, // 26: jne fail (45)
    ...count, // 28: dec r12d; jnz loop | nop; jmp loop
    0xbf,
    0,
    0,
    0,
    0, // 33: mov edi, 0
    ...syscall(60), // 38: exit(0)
    0xbf,
    1,
    0,
    0,
    0, // 45: fail: mov edi, 1
    ...syscall(60), // 50: exit(1)
  ])
}
