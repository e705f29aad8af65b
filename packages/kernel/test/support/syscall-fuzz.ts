// The syscall fuzzer's oracle (issue 17), shared by test/syscall-fuzz.test.ts
// and the long runs (tools/fuzz/syscalls.ts): the "-v" lines of
// fixtures/syscallfuzz.c, the call-by-call comparison with the same run on
// Linux, and the documented differences that comparison lets pass.

import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { syscallName } from '../../src/index.js'

/**
 * The scratch directory, the same path for both runs: on a tmpfs (/dev/shm)
 * where there is one, the file system the kernel's own is (ext4 answers
 * some calls otherwise: s_maxbytes, lseek on a directory, O_DIRECT).
 */
export function makeScratch(): string {
  try {
    return mkdtempSync('/dev/shm/probekit-fuzz-')
  } catch {
    return mkdtempSync(join(tmpdir(), 'probekit-fuzz-'))
  }
}

/**
 * The fuzzer natively: in scratch, with no environment, an ordinary process
 * (not pid 1, not a session leader), as fixtures/fuzzinit makes it under
 * the kernel.
 */
export function runNative(
  fuzzer: string,
  args: string[],
  scratch: string,
  timeout: number,
): SpawnSyncReturns<string> {
  return spawnSync(fuzzer, [...args, scratch], {
    cwd: scratch,
    env: {},
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    timeout,
    killSignal: 'SIGKILL',
  })
}

/** One line of `syscallfuzz -v`: "I NR A0..A5 = RESULT". */
export interface Call {
  i: number
  nr: number
  args: string
  result: string
}

export function parseCalls(out: string): Call[] {
  const calls: Call[] = []
  for (const line of out.split('\n')) {
    const m = /^(\d+) (-?\d+) ((?:[0-9a-f]+ ){5}[0-9a-f]+) = (\S+)$/.exec(line)
    if (m) calls.push({ i: Number(m[1]), nr: Number(m[2]), args: m[3], result: m[4] })
  }
  return calls
}

/** The number as Linux reads it from rax: the low 32 bits, signed (entry_64.S: movslq %eax). */
export const linuxNr = (nr: number): number => Number(BigInt.asIntN(32, BigInt(nr)))

/**
 * Where the kernel's answer may differ from Linux's, and why. Keyed by the
 * system call's name; every other call must answer exactly as Linux does.
 */
export const ALLOWED: Record<string, string> = (() => {
  const groups: [string, string][] = [
    // No extended attributes: every xattr call is EOPNOTSUPP, where Linux first resolves the path or
    // descriptor (ENOENT, ENOTDIR, EBADF), copies the name (EFAULT), checks the size (ERANGE) and
    // lists an empty set (0).
    ['getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr', 'no extended attributes'],
    // The oracle's environment, not the kernel: natively the fuzzer runs without CAP_SYS_RESOURCE and
    // under a hard RLIMIT_CPU (setrlimit/prlimit64 EPERM where root may), on ext4 (s_maxbytes 2^44:
    // sendfile's EOVERFLOW), with the host's cpumask size (sched_getaffinity's 32 bytes).
    [
      'setrlimit prlimit64 sendfile sched_getaffinity',
      "the native run's capabilities, limits and file system",
    ],
    // Memory: mmap's flag and offset checks (MAP_SHARED_VALIDATE, unknown MAP_TYPE, an offset that
    // wraps: EINVAL/EOVERFLOW), madvise's advice list, mprotect of PROT_GROWSDOWN ranges.
    ['mmap madvise mprotect', 'mm argument checks (mmap flags, madvise advice, grows-down ranges)'],
    // Descriptor I/O: ioctl's generic requests (FIONREAD, FIOQSIZE, FS_IOC_GETFLAGS); read(2) and
    // write(2) check the buffer before the file's mode and write nothing short of a fault (the guest's
    // C sys_read/sys_write, not changed here).
    ['ioctl read write', 'I/O argument checks'],
    // statx's flag and mask checks.
    ['statx', 'statx argument checks'],
    // Processes and signals: clone's flag combinations and CLONE_PIDFD/PARENT_SETTID writes, futex's
    // op and address checks (both in the guest's C), kill's order of the signal and pid checks,
    // CPU-time clocks (negative clock ids), arch_prctl's CPUID and shadow-stack codes.
    ['clone futex kill clock_nanosleep arch_prctl', 'process and signal argument checks'],
    // Sockets: getsockname/getpeername on a non-socket (ENOTSOCK), socket's type check before the family.
    ['getsockname getpeername socket', 'socket argument checks'],
  ]
  return Object.fromEntries(groups.flatMap(([names, why]) => names.split(' ').map((n) => [n, why])))
})()

/** A call answered otherwise than Linux answered it. */
export interface Difference {
  i: number
  name: string
  args: string
  linux: string
  probekit: string
  /** Why the difference is let pass (ALLOWED), or undefined. */
  allowed?: string
}

/**
 * Compare the two runs call by call. Not a difference: an unimplemented
 * call's ENOSYS (the kernel reports those in `unimplemented`, by the number
 * both kernels take from eax, whatever rax holds above it).
 */
export function compareCalls(theirs: Call[], ours: Call[], unimplemented: ReadonlySet<number>): Difference[] {
  const differ: Difference[] = []
  for (const [k, t] of theirs.entries()) {
    const o = ours[k]
    if (!o) break
    if (o.i !== t.i || o.nr !== t.nr)
      throw new Error(`call ${k}: the runs went apart (#${o.i} ${o.nr}, #${t.i} ${t.nr})`)
    if (o.result === t.result) continue
    const nr = linuxNr(t.nr)
    if (o.result === 'ENOSYS' && unimplemented.has(nr)) continue
    const name = syscallName(nr)
    differ.push({ i: t.i, name, args: t.args, linux: t.result, probekit: o.result, allowed: ALLOWED[name] })
  }
  return differ
}
