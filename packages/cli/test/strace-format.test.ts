// The strace formatter against lines strace 6.1 printed natively (strace -f
// on small C programs and the kernel fixtures, ASLR off so `-e raw=all`
// gave the same register values). Each case feeds the registers strace saw
// and the memory its output shows, and expects the line byte for byte.

import { describe, expect, it } from 'vitest'
import {
  formatExit,
  formatSignal,
  formatSyscall,
  formatUnfinishedSyscall,
  type StraceMemory,
  startSyscall,
} from '../src/strace/index.js'

/** Guest memory by 4 KiB pages, unmapped where nothing was put. */
class FakeMemory implements StraceMemory {
  private readonly pages = new Map<number, Uint8Array>()
  put(addr: number, bytes: Uint8Array | string): this {
    const data = typeof bytes === 'string' ? latin1(bytes) : bytes
    for (let i = 0; i < data.length; i++) {
      const at = addr + i
      const key = Math.floor(at / 4096)
      let page = this.pages.get(key)
      if (!page) this.pages.set(key, (page = new Uint8Array(4096)))
      page[at % 4096] = data[i]
    }
    return this
  }
  read(addr: number, len: number): Uint8Array | null {
    const out = new Uint8Array(len)
    for (let i = 0; i < len; i++) {
      const page = this.pages.get(Math.floor((addr + i) / 4096))
      if (!page) return null
      out[i] = page[(addr + i) % 4096]
    }
    return out
  }
}

const mem = () => new FakeMemory()
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
const cstr = (s: string) => latin1(`${s}\0`)
function u64s(...values: (number | bigint)[]): Uint8Array {
  const out = new Uint8Array(values.length * 8)
  const view = new DataView(out.buffer)
  for (const [i, v] of values.entries()) view.setBigUint64(i * 8, BigInt.asUintN(64, BigInt(v)), true)
  return out
}
function u32s(...values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4)
  const view = new DataView(out.buffer)
  for (const [i, v] of values.entries()) view.setUint32(i * 4, v >>> 0, true)
  return out
}
/** struct stat (x86-64) with the fields strace shows. */
function stat(mode: number, size: number, rdev = 0n): Uint8Array {
  const out = new Uint8Array(144)
  const view = new DataView(out.buffer)
  view.setUint32(24, mode, true)
  view.setBigUint64(40, rdev, true)
  view.setBigInt64(48, BigInt(size), true)
  return out
}

const NR = {
  read: 0,
  write: 1,
  open: 2,
  close: 3,
  stat: 4,
  fstat: 5,
  lseek: 8,
  mmap: 9,
  mprotect: 10,
  munmap: 11,
  brk: 12,
  rt_sigaction: 13,
  rt_sigprocmask: 14,
  ioctl: 16,
  pread64: 17,
  readv: 19,
  writev: 20,
  access: 21,
  pipe: 22,
  madvise: 28,
  dup2: 33,
  pause: 34,
  getpid: 39,
  clone: 56,
  execve: 59,
  exit: 60,
  wait4: 61,
  kill: 62,
  uname: 63,
  fcntl: 72,
  ftruncate: 77,
  getcwd: 79,
  mkdir: 83,
  umask: 95,
  getuid: 102,
  rt_sigpending: 127,
  rt_sigsuspend: 130,
  sigaltstack: 131,
  arch_prctl: 158,
  tkill: 200,
  futex: 202,
  getdents64: 217,
  set_tid_address: 218,
  clock_nanosleep: 230,
  exit_group: 231,
  tgkill: 234,
  openat: 257,
  newfstatat: 262,
  set_robust_list: 273,
  dup3: 292,
  pipe2: 293,
  prlimit64: 302,
  getrandom: 318,
  rseq: 334,
  clone3: 435,
  faccessat2: 439,
} as const

const none = mem()

/** A line of strace -f -o FILE output, which starts with "PID " (20148 here). */
const pid6 = (nr: number, args: readonly number[], ret: number, m: StraceMemory) =>
  `20148 ${formatSyscall(nr, args, ret, m, { column: 6 })}`
const ENOENT = -2
const EBADF = -9

describe('formatSyscall: results and alignment', () => {
  it('pads so "= " starts at column 40, one space after a long call', () => {
    expect(formatSyscall(NR.close, [3], 0, none)).toBe('close(3)                                = 0')
    expect(formatSyscall(NR.arch_prctl, [0x1002, 0x7ffff7dd1740], 0, none)).toBe(
      'arch_prctl(ARCH_SET_FS, 0x7ffff7dd1740) = 0',
    )
    expect(formatSyscall(NR.getpid, [], 8116, none)).toBe('getpid()                                = 8116')
    expect(formatSyscall(NR.getuid, [], 0, none)).toBe('getuid()                                = 0')
  })

  it('counts what precedes the call on the line (strace -f pid prefix)', () => {
    expect(`[pid  7244] ${formatSyscall(NR.close, [4], 0, none, { column: 12 })}`).toBe(
      '[pid  7244] close(4)                    = 0',
    )
  })

  it('prints errors as -1 ENAME (strerror)', () => {
    const m = mem().put(0x555555557022, cstr('/nonexistent/x'))
    expect(formatSyscall(NR.openat, [0xffffff9c, 0x555555557022, 0, 0], ENOENT, m)).toBe(
      'openat(AT_FDCWD, "/nonexistent/x", O_RDONLY) = -1 ENOENT (No such file or directory)',
    )
    expect(formatSyscall(NR.close, [3], EBADF, none)).toBe(
      'close(3)                                = -1 EBADF (Bad file descriptor)',
    )
    expect(formatSyscall(NR.mmap, [0, 0x1000, 1, 2, 0x3039, 0x3000], EBADF, none)).toBe(
      'mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 12345, 0x3000) = -1 EBADF (Bad file descriptor)',
    )
  })

  it('prints a call interrupted by a signal as = ? ERESTART...', () => {
    expect(formatSyscall(NR.pause, [], -514, none)).toBe(
      'pause()                                 = ? ERESTARTNOHAND (To be restarted if no handler)',
    )
    const m = mem().put(0x7fffffffe54c, u32s(0))
    expect(formatSyscall(NR.wait4, [10293, 0x7fffffffe54c, 0, 0], -512, m)).toBe(
      'wait4(10293, 0x7fffffffe54c, 0, NULL)   = ? ERESTARTSYS (To be restarted if SA_RESTART is set)',
    )
  })

  it('names an unknown number syscall_0x... and prints its six registers raw', () => {
    expect(formatSyscall(500, [1, 2, 3, 0, 0xffffffff, 0x1234], -38, none)).toBe(
      'syscall_0x1f4(0x1, 0x2, 0x3, 0, 0xffffffff, 0x1234) = -1 ENOSYS (Function not implemented)',
    )
  })

  it('prints a known call it does not decode as that many raw values', () => {
    // sched_setaffinity (203) takes three arguments.
    expect(formatSyscall(203, [0, 0x80, 0x7ffd0000], 0, none)).toBe(
      'sched_setaffinity(0, 0x80, 0x7ffd0000)  = 0',
    )
  })
})

describe('formatSyscall: strings and buffers', () => {
  it('escapes like strace and cuts at 32 bytes with ... after the quote', () => {
    const text = latin1('tab\there "q" back\\slash nl\n\x01\x7f\xff\xe9 end')
    const m = mem().put(0x555555557090, text)
    expect(formatSyscall(NR.write, [3, 0x555555557090, 35], 35, m)).toBe(
      'write(3, "tab\\there \\"q\\" back\\\\slash nl\\n\\1\\177\\377\\351 "..., 35) = 35',
    )
  })

  it('uses three octal digits only before a digit 0-7', () => {
    const m = mem().put(0x5555555570e3, latin1('\x001\x002')).put(0x1000, latin1("\x07\x08\x1b'%\x00"))
    expect(formatSyscall(NR.write, [3, 0x5555555570e3, 4], 4, m)).toBe(
      'write(3, "\\0001\\0002", 4)               = 4',
    )
    expect(formatSyscall(NR.write, [1, 0x1000, 6], 6, m)).toBe(
      'write(1, "\\7\\10\\33\'%\\0", 6)             = 6',
    )
  })

  it('shows exactly 32 bytes without ..., 33 with', () => {
    const abc = 'abcdefghijklmnopqrstuvwxyz012345'
    const m = mem()
      .put(0x2000, `${abc}6`)
      .put(0x3000, `${abc.slice(0, 31)}\x015`)
    expect(formatSyscall(NR.write, [1, 0x2000, 32], 32, m)).toBe(`write(1, "${abc}", 32) = 32`)
    expect(formatSyscall(NR.write, [1, 0x2000, 33], 33, m)).toBe(`write(1, "${abc}"..., 33) = 33`)
    // The last shown byte gets no look-ahead: \1, not \001, before the cut.
    expect(formatSyscall(NR.write, [1, 0x3000, 33], 33, m)).toBe(
      'write(1, "abcdefghijklmnopqrstuvwxyz01234\\1"..., 33) = 33',
    )
  })

  it('prints NULL, an unreadable buffer as its address, and an empty one as ""', () => {
    const m = mem().put(0x4000, 'x')
    expect(formatSyscall(NR.write, [1, 0, 0], 0, m)).toBe('write(1, NULL, 0)                       = 0')
    expect(formatSyscall(NR.write, [1, 8, 5], 5, m)).toBe('write(1, 0x8, 5)                        = 5')
    expect(formatSyscall(NR.write, [1, 0x4000, 0], 0, m)).toBe('write(1, "", 0)                         = 0')
  })

  it('shows what read transferred, and the address when it failed', () => {
    const elf = latin1('\x7fELF\x02\x01\x01\x03\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\x10t\x02\0\0\0\0\0')
    const m = mem().put(0x7fffffffd988, elf).put(0x7fffe000, 'ileio\n')
    expect(formatSyscall(NR.read, [3, 0x7fffffffd988, 0x340], 832, m)).toBe(
      'read(3, "\\177ELF\\2\\1\\1\\3\\0\\0\\0\\0\\0\\0\\0\\0\\3\\0>\\0\\1\\0\\0\\0\\20t\\2\\0\\0\\0\\0\\0"..., 832) = 832',
    )
    expect(formatSyscall(NR.read, [3, 0x7fffe000, 256], 6, m)).toBe(
      'read(3, "ileio\\n", 256)                 = 6',
    )
    expect(formatSyscall(NR.read, [3, 0x7fffe000, 256], 0, m)).toBe(
      'read(3, "", 256)                        = 0',
    )
    expect(pid6(NR.read, [99, 0x7fffffffe500, 10], EBADF, m)).toBe(
      '20148 read(99, 0x7fffffffe500, 10)      = -1 EBADF (Bad file descriptor)',
    )
    expect(pid6(NR.read, [3, 1, 10], -14, m)).toBe(
      '20148 read(3, 0x1, 10)                  = -1 EFAULT (Bad address)',
    )
  })

  it('prints pread64 with its offset', () => {
    const m = mem().put(0x7fffffffd5a0, latin1(`${'\x06\0\0\0\x04\0\0\0'}${'@\0\0\0\0\0\0\0'.repeat(3)}`))
    expect(formatSyscall(NR.pread64, [3, 0x7fffffffd5a0, 0x310, 0x40], 784, m)).toBe(
      'pread64(3, "\\6\\0\\0\\0\\4\\0\\0\\0@\\0\\0\\0\\0\\0\\0\\0@\\0\\0\\0\\0\\0\\0\\0@\\0\\0\\0\\0\\0\\0\\0"..., 784, 64) = 784',
    )
  })

  it('prints paths whole, past 32 bytes', () => {
    const path = '/tmp/st/a-very-long-path-name-that-exceeds-thirty-two-bytes/and/more/file.txt'
    const m = mem().put(0x555555557004, cstr(path))
    expect(formatSyscall(NR.openat, [0xffffff9c, 0x555555557004, 0, 0], ENOENT, m)).toBe(
      `openat(AT_FDCWD, "${path}", O_RDONLY) = -1 ENOENT (No such file or directory)`,
    )
    expect(formatSyscall(NR.openat, [0xffffff9c, 1, 0, 0], -14, m)).toBe(
      'openat(AT_FDCWD, 0x1, O_RDONLY)         = -1 EFAULT (Bad address)',
    )
    expect(formatSyscall(NR.openat, [0xffffff9c, 0, 0, 0], -14, m)).toBe(
      'openat(AT_FDCWD, NULL, O_RDONLY)        = -1 EFAULT (Bad address)',
    )
  })

  it('prints getrandom data in hex', () => {
    const m = mem().put(
      0x7fffffffd2a0,
      latin1('\x74\x60\xae\x1a\x4c\xc2\x0c\xf9\x6c\x8e\x6a\xa5\x2b\x93\x53\x1b'),
    )
    expect(formatSyscall(NR.getrandom, [0x7fffffffd2a0, 16, 0], 16, m)).toBe(
      'getrandom("\\x74\\x60\\xae\\x1a\\x4c\\xc2\\x0c\\xf9\\x6c\\x8e\\x6a\\xa5\\x2b\\x93\\x53\\x1b", 16, 0) = 16',
    )
    expect(formatSyscall(NR.getrandom, [0x7fffffffd2a0, 8, 1], 8, m)).toBe(
      'getrandom("\\x74\\x60\\xae\\x1a\\x4c\\xc2\\x0c\\xf9", 8, GRND_NONBLOCK) = 8',
    )
    expect(formatSyscall(NR.getrandom, [0x7fffffffe5e0, 40, 6], -22, m)).toBe(
      'getrandom(0x7fffffffe5e0, 40, GRND_RANDOM|GRND_INSECURE) = -1 EINVAL (Invalid argument)',
    )
  })
})

describe('formatSyscall: flags and constants', () => {
  const path = 0x555555557012
  const m = mem().put(path, cstr('/tmp/st/x'))
  const open = (flags: number, mode = 0) => formatSyscall(NR.openat, [0xffffff9c, path, flags, mode], 3, m)

  it('decodes open flags and shows the mode only with O_CREAT or O_TMPFILE', () => {
    expect(open(0x80000)).toBe('openat(AT_FDCWD, "/tmp/st/x", O_RDONLY|O_CLOEXEC) = 3')
    expect(open(0x241, 0o644)).toBe('openat(AT_FDCWD, "/tmp/st/x", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3')
    expect(open(0x90800)).toBe('openat(AT_FDCWD, "/tmp/st/x", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3')
    expect(open(0o20200002, 0o600)).toBe('openat(AT_FDCWD, "/tmp/st/x", O_RDWR|O_TMPFILE, 0600) = 3')
    expect(open(0o10400400, 0o644)).toBe(
      'openat(AT_FDCWD, "/tmp/st/x", O_RDONLY|O_NOCTTY|O_NOFOLLOW|O_PATH) = 3',
    )
    expect(open(0o5030101, 0)).toBe(
      'openat(AT_FDCWD, "/tmp/st/x", O_WRONLY|O_CREAT|O_SYNC|O_NOATIME|FASYNC, 000) = 3',
    )
    expect(open(0x40000000 | 0o40002, 0o777)).toBe(
      'openat(AT_FDCWD, "/tmp/st/x", O_RDWR|O_DIRECT|0x40000000) = 3',
    )
    expect(open(0o203)).toBe('openat(AT_FDCWD, "/tmp/st/x", O_ACCMODE|O_EXCL) = 3')
    const d = mem().put(0x400000, cstr('data.txt'))
    expect(formatSyscall(NR.open, [0x400000, 0o100302, 0o644], 3, d)).toBe(
      'open("data.txt", O_RDWR|O_CREAT|O_EXCL|O_LARGEFILE, 0644) = 3',
    )
  })

  it('decodes mmap, mprotect, munmap and brk', () => {
    expect(formatSyscall(NR.mmap, [0, 0x2000, 3, 0x22, 0xffffffff, 0], 0x7ffff7fc0000, none)).toBe(
      'mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc0000',
    )
    expect(
      formatSyscall(NR.mmap, [0x7ffff7dfa000, 0x156000, 5, 0x812, 3, 0x26000], 0x7ffff7dfa000, none),
    ).toBe(
      'mmap(0x7ffff7dfa000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000) = 0x7ffff7dfa000',
    )
    expect(formatSyscall(NR.mmap, [0x700000000000, 0x1000, 1, 0x4031, -1, 0], 0x700000000000, none)).toBe(
      'mmap(0x700000000000, 4096, PROT_READ, MAP_SHARED|MAP_FIXED|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = 0x700000000000',
    )
    expect(formatSyscall(NR.mmap, [0, 0x801000, 0, 0x20022, -1, 0], 0x7ffff75d0000, none)).toBe(
      'mmap(NULL, 8392704, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0) = 0x7ffff75d0000',
    )
    expect(formatSyscall(NR.mmap, [0, 0x1000, 0xf, 0x2160, -1, 0], 0x40000000, none)).toBe(
      'mmap(NULL, 4096, PROT_READ|PROT_WRITE|PROT_EXEC|PROT_SEM, MAP_FILE|MAP_ANONYMOUS|MAP_32BIT|MAP_GROWSDOWN|MAP_LOCKED, -1, 0) = 0x40000000',
    )
    expect(formatSyscall(NR.mmap, [0, 0x1000, 0x10, 0x11d1003, 3, 0], -22, none)).toBe(
      'mmap(NULL, 4096, 0x10 /* PROT_??? */, MAP_SHARED_VALIDATE|MAP_NONBLOCK|MAP_EXECUTABLE|MAP_HUGETLB|MAP_SYNC|MAP_FIXED_NOREPLACE|0x1000000, 3, 0) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.mmap, [0, 0x1000, 1, 0x54040022, -1, 0], -12, none)).toBe(
      'mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB|21<<MAP_HUGE_SHIFT, -1, 0) = -1 ENOMEM (Cannot allocate memory)',
    )
    expect(formatSyscall(NR.mprotect, [0x7ffff7fbe000, 0x1000, 0], 0, none)).toBe(
      'mprotect(0x7ffff7fbe000, 4096, PROT_NONE) = 0',
    )
    expect(formatSyscall(NR.mprotect, [0x40000000, 0x1000, 0x1000001], 0, none)).toBe(
      'mprotect(0x40000000, 4096, PROT_READ|PROT_GROWSDOWN) = 0',
    )
    expect(formatSyscall(NR.mprotect, [0x40000000, 0x1000, 0x1001], -22, none)).toBe(
      'mprotect(0x40000000, 4096, PROT_READ|0x1000) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.munmap, [0x7ffff7fb6000, 0x9853], 0, none)).toBe(
      'munmap(0x7ffff7fb6000, 38995)           = 0',
    )
    expect(formatSyscall(NR.brk, [0], 0x55555555a000, none)).toBe(
      'brk(NULL)                               = 0x55555555a000',
    )
    expect(formatSyscall(NR.brk, [0x55555557b000], 0x55555557b000, none)).toBe(
      'brk(0x55555557b000)                     = 0x55555557b000',
    )
    expect(formatSyscall(NR.madvise, [0x7ffff75d0000, 8368128, 4], 0, none)).toBe(
      'madvise(0x7ffff75d0000, 8368128, MADV_DONTNEED) = 0',
    )
  })

  it('decodes lseek whence, access modes, dup3 and pipe2 flags', () => {
    expect(formatSyscall(NR.lseek, [0, 5, 1], 0, none)).toBe('lseek(0, 5, SEEK_CUR)                   = 0')
    expect(formatSyscall(NR.lseek, [3, -6, 2], 7, none)).toBe('lseek(3, -6, SEEK_END)                  = 7')
    expect(formatSyscall(NR.lseek, [0, 0, 7], -22, none)).toBe(
      'lseek(0, 0, 0x7 /* SEEK_??? */)         = -1 EINVAL (Invalid argument)',
    )
    const p = mem().put(0x55555555705b, cstr('/etc/passwd')).put(0x555555557067, cstr('/etc/shadow'))
    expect(formatSyscall(NR.access, [0x55555555705b, 0], 0, p)).toBe(
      'access("/etc/passwd", F_OK)             = 0',
    )
    expect(formatSyscall(NR.access, [0x555555557067, 3], -13, p)).toBe(
      'access("/etc/shadow", W_OK|X_OK)        = -1 EACCES (Permission denied)',
    )
    expect(formatSyscall(NR.faccessat2, [0xffffff9c, 0x55555555705b, 4, 0x200], 0, p)).toBe(
      'faccessat2(AT_FDCWD, "/etc/passwd", R_OK, AT_EACCESS) = 0',
    )
    expect(formatSyscall(NR.dup2, [5, 10], 10, none)).toBe('dup2(5, 10)                             = 10')
    expect(formatSyscall(NR.dup3, [6, 11, 0x80000], 11, none)).toBe(
      'dup3(6, 11, O_CLOEXEC)                  = 11',
    )
    const fds = mem().put(0x7fffffffd440, u32s(5, 6))
    expect(formatSyscall(NR.pipe2, [0x7fffffffd440, 0x80800], 0, fds)).toBe(
      'pipe2([5, 6], O_NONBLOCK|O_CLOEXEC)     = 0',
    )
    expect(formatSyscall(NR.pipe, [0x7fffffffd440], 0, fds)).toBe(
      'pipe([5, 6])                            = 0',
    )
  })

  it('decodes fcntl commands, their arguments and results', () => {
    expect(formatSyscall(NR.fcntl, [10, 1, 0x80000], 0, none)).toBe(
      'fcntl(10, F_GETFD)                      = 0',
    )
    expect(formatSyscall(NR.fcntl, [10, 2, 1], 0, none)).toBe('fcntl(10, F_SETFD, FD_CLOEXEC)          = 0')
    expect(formatSyscall(NR.fcntl, [10, 3, 0], 0x800, none)).toBe(
      'fcntl(10, F_GETFL)                      = 0x800 (flags O_RDONLY|O_NONBLOCK)',
    )
    expect(formatSyscall(NR.fcntl, [3, 3, 0], 0x8401, none)).toBe(
      'fcntl(3, F_GETFL)                       = 0x8401 (flags O_WRONLY|O_APPEND|O_LARGEFILE)',
    )
    expect(formatSyscall(NR.fcntl, [10, 4, 0x800], 0, none)).toBe(
      'fcntl(10, F_SETFL, O_RDONLY|O_NONBLOCK) = 0',
    )
    expect(formatSyscall(NR.fcntl, [10, 0x406, 0x14], 20, none)).toBe(
      'fcntl(10, F_DUPFD_CLOEXEC, 20)          = 20',
    )
    expect(formatSyscall(NR.fcntl, [10, 0, 0x1e], 30, none)).toBe(
      'fcntl(10, F_DUPFD, 30)                  = 30',
    )
  })

  it('decodes umask, mkdir modes and ftruncate', () => {
    expect(formatSyscall(NR.umask, [0o22], 0o22, none)).toBe('umask(022)                              = 022')
    const m2 = mem().put(0x401000, cstr('probekit-fileio.7229'))
    expect(formatSyscall(NR.mkdir, [0x401000, 0o755], -17, m2)).toBe(
      'mkdir("probekit-fileio.7229", 0755)     = -1 EEXIST (File exists)',
    )
    expect(formatSyscall(NR.ftruncate, [3, 20], 0, none)).toBe('ftruncate(3, 20)                        = 0')
  })

  it('prints arch_prctl, set_tid_address, set_robust_list, rseq', () => {
    const fs = mem().put(0x7fffffffe5d8, u64s(0x7ffff7dd1740))
    expect(formatSyscall(NR.arch_prctl, [0x1003, 0x7fffffffe5d8], 0, fs)).toBe(
      'arch_prctl(ARCH_GET_FS, [0x7ffff7dd1740]) = 0',
    )
    expect(formatSyscall(NR.arch_prctl, [0x3001, 0x7fffffffe5d8], -22, fs)).toBe(
      'arch_prctl(0x3001 /* ARCH_??? */, 0x7fffffffe5d8) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.set_tid_address, [0x7ffff7dd1a10], 8116, none)).toBe(
      'set_tid_address(0x7ffff7dd1a10)         = 8116',
    )
    expect(formatSyscall(NR.set_robust_list, [0x7ffff7dd1a20, 24], 0, none)).toBe(
      'set_robust_list(0x7ffff7dd1a20, 24)     = 0',
    )
    expect(formatSyscall(NR.rseq, [0x7ffff7dd2060, 0x20, 0, 0x53053053], 0, none)).toBe(
      'rseq(0x7ffff7dd2060, 0x20, 0, 0x53053053) = 0',
    )
  })

  it('decodes futex operations', () => {
    const f = 0x7fffffffe584
    const ts = mem().put(0x7fffffffe570, u64s(1, 5))
    expect(formatSyscall(NR.futex, [0x7fffffffd16c, 0x81, 1, 0, 0, 0], 0, none)).toBe(
      'futex(0x7fffffffd16c, FUTEX_WAKE_PRIVATE, 1) = 0',
    )
    expect(formatSyscall(NR.futex, [0x7fffffffd16c, 0x80, 1, 0, 0, 0], -11, none)).toBe(
      'futex(0x7fffffffd16c, FUTEX_WAIT_PRIVATE, 1, NULL) = -1 EAGAIN (Resource temporarily unavailable)',
    )
    expect(formatSyscall(NR.futex, [f, 0, 0, 0x7fffffffe570, 0, 0], -11, ts)).toBe(
      'futex(0x7fffffffe584, FUTEX_WAIT, 0, {tv_sec=1, tv_nsec=5}) = -1 EAGAIN (Resource temporarily unavailable)',
    )
    expect(formatSyscall(NR.futex, [f, 0x83, 1, 2, 0x7fffffffe570, 0], 0, ts)).toBe(
      'futex(0x7fffffffe584, FUTEX_REQUEUE_PRIVATE, 1, 2, 0x7fffffffe570) = 0',
    )
    expect(formatSyscall(NR.futex, [f, 0x84, 1, 2, 0x7fffffffe570, 7], -11, ts)).toBe(
      'futex(0x7fffffffe584, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, 0x7fffffffe570, 7) = -1 EAGAIN (Resource temporarily unavailable)',
    )
    expect(formatSyscall(NR.futex, [f, 0x85, 1, 1, 0x7fffffffe570, 0x04000001], 0, ts)).toBe(
      'futex(0x7fffffffe584, FUTEX_WAKE_OP_PRIVATE, 1, 1, 0x7fffffffe570, FUTEX_OP_SET<<28|0<<12|FUTEX_OP_CMP_GT<<24|0x1) = 0',
    )
    expect(formatSyscall(NR.futex, [f, 0x8a, 1, 0, 0, 0xffffffff], 0, none)).toBe(
      'futex(0x7fffffffe584, FUTEX_WAKE_BITSET_PRIVATE, 1, FUTEX_BITSET_MATCH_ANY) = 0',
    )
    expect(formatSyscall(NR.futex, [f, 0x86, 0, 0, 0, 0], -1, none)).toBe(
      'futex(0x7fffffffe584, FUTEX_LOCK_PI_PRIVATE, NULL) = -1 EPERM (Operation not permitted)',
    )
    expect(formatSyscall(NR.futex, [f, 8, 0, 0, 0, 0], -11, none)).toBe(
      'futex(0x7fffffffe584, FUTEX_TRYLOCK_PI) = -1 EAGAIN (Resource temporarily unavailable)',
    )
    expect(formatSyscall(NR.futex, [f, 99, 0, 0, 0, 0], -38, none)).toBe(
      'futex(0x7fffffffe584, 0x63 /* FUTEX_??? */, 0, NULL, NULL, 0) = -1 ENOSYS (Function not implemented)',
    )
    expect(formatSyscall(NR.futex, [0x7ffff7dd0990, 0x109, 8117, 0, 0, 0xffffffff], 0, none)).toBe(
      'futex(0x7ffff7dd0990, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 8117, NULL, FUTEX_BITSET_MATCH_ANY) = 0',
    )
  })

  it('decodes prlimit64 and its rlimits', () => {
    const m = mem()
      .put(0x7fffffffe360, u64s(8192 * 1024, -1))
      .put(0x7fffffffd290, u64s(20000, 20000))
    expect(formatSyscall(NR.prlimit64, [0, 3, 0, 0x7fffffffe360], 0, m)).toBe(
      'prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0',
    )
    expect(formatSyscall(NR.prlimit64, [0, 7, 0, 0x7fffffffd290], 0, m)).toBe(
      'prlimit64(0, RLIMIT_NOFILE, NULL, {rlim_cur=20000, rlim_max=20000}) = 0',
    )
    expect(formatSyscall(NR.prlimit64, [0, 99, 0, 0x7fffffffe550], -22, m)).toBe(
      'prlimit64(0, 0x63 /* RLIMIT_??? */, NULL, 0x7fffffffe550) = -1 EINVAL (Invalid argument)',
    )
  })
})

describe('formatSyscall: structs and arrays', () => {
  it('abbreviates struct stat like strace', () => {
    const m = mem()
      .put(0x7ffff7ff3c99, cstr(''))
      .put(0x7fffffffd820, stat(0o100644, 38995))
      .put(0x55555555703d, cstr('/dev/null'))
      .put(0x7fffffffd490, stat(0o20666, 0, 0x103n))
      .put(0x7fffe100, stat(0o104755, 68248))
      .put(0x7fffe200, stat(0o41777, 4096))
      .put(0x7fffe300, stat(0o20600, 0, 0x8800n))
    expect(formatSyscall(NR.newfstatat, [3, 0x7ffff7ff3c99, 0x7fffffffd820, 0x1000], 0, m)).toBe(
      'newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=38995, ...}, AT_EMPTY_PATH) = 0',
    )
    expect(formatSyscall(NR.newfstatat, [0xffffff9c, 0x55555555703d, 0x7fffffffd490, 0], 0, m)).toBe(
      'newfstatat(AT_FDCWD, "/dev/null", {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}, 0) = 0',
    )
    expect(formatSyscall(NR.newfstatat, [0xffffff9c, 0x55555555703d, 0x7fffe100, 0x100], 0, m)).toBe(
      'newfstatat(AT_FDCWD, "/dev/null", {st_mode=S_IFREG|S_ISUID|0755, st_size=68248, ...}, AT_SYMLINK_NOFOLLOW) = 0',
    )
    expect(formatSyscall(NR.stat, [0x55555555703d, 0x7fffe200], 0, m)).toBe(
      'stat("/dev/null", {st_mode=S_IFDIR|S_ISVTX|0777, st_size=4096, ...}) = 0',
    )
    expect(formatSyscall(NR.fstat, [0, 0x7fffe300], 0, m)).toBe(
      'fstat(0, {st_mode=S_IFCHR|0600, st_rdev=makedev(0x88, 0), ...}) = 0',
    )
    expect(formatSyscall(NR.stat, [0x55555555703d, 0x7ffffd74aed0], ENOENT, m)).toBe(
      'stat("/dev/null", 0x7ffffd74aed0)       = -1 ENOENT (No such file or directory)',
    )
  })

  it('prints writev and readv iovec arrays', () => {
    const m = mem()
      .put(0x7fffffffd140, u64s(0x1000, 2, 0x1010, 3))
      .put(0x1000, 'ab')
      .put(0x1010, 'cd\n')
      .put(0x2000, u64s(0x3000, 4, 0x3010, 20, 0x3030, 5))
      .put(0x3000, 'hell')
      .put(0x3010, 'o world')
      .put(0x3030, 'zzzzz')
    expect(formatSyscall(NR.writev, [1, 0x7fffffffd140, 2], 5, m)).toBe(
      'writev(1, [{iov_base="ab", iov_len=2}, {iov_base="cd\\n", iov_len=3}], 2) = 5',
    )
    expect(formatSyscall(NR.readv, [3, 0x2000, 3], 11, m)).toBe(
      'readv(3, [{iov_base="hell", iov_len=4}, {iov_base="o world", iov_len=20}, {iov_base="", iov_len=5}], 3) = 11',
    )
    expect(pid6(NR.writev, [1, 0, 0], 0, m)).toBe('20148 writev(1, NULL, 0)                = 0')
    expect(pid6(NR.writev, [1, 8, 1], -14, m)).toBe(
      '20148 writev(1, 0x8, 1)                 = -1 EFAULT (Bad address)',
    )
    const many = mem()
      .put(0x5000, u64s(...Array.from({ length: 40 }, () => [0x6000, 1]).flat()))
      .put(0x6000, 'a')
    const item = '{iov_base="a", iov_len=1}'
    expect(formatSyscall(NR.writev, [4, 0x5000, 40], 40, many)).toBe(
      `writev(4, [${Array(32).fill(item).join(', ')}, ...], 40) = 40`,
    )
  })

  it('prints uname, getcwd and getdents64 as strace abbreviates them', () => {
    const uts = new Uint8Array(390)
    uts.set(latin1('Linux'), 0)
    uts.set(latin1('vm'), 65)
    uts.set(latin1('6.18.44'), 130)
    const m = mem().put(0x7fffffffd2b0, uts).put(0x7fffffffe500, cstr('/tmp/st'))
    expect(formatSyscall(NR.uname, [0x7fffffffd2b0], 0, m)).toBe(
      'uname({sysname="Linux", nodename="vm", ...}) = 0',
    )
    expect(pid6(NR.getcwd, [0x7fffffffe500, 64], 8, m)).toBe('20148 getcwd("/tmp/st", 64)             = 8')
    expect(pid6(NR.getcwd, [0x7fffffffe500, 2], -34, m)).toBe(
      '20148 getcwd(0x7fffffffe500, 2)         = -1 ERANGE (Numerical result out of range)',
    )
    const dirents = new Uint8Array(96)
    const view = new DataView(dirents.buffer)
    for (const [i, name] of ['.', '..', 'a', 'bb'].entries()) {
      view.setUint16(i * 24 + 16, 24, true)
      dirents.set(latin1(name), i * 24 + 19)
    }
    const d = mem().put(0x7fffffffd520, dirents)
    expect(formatSyscall(NR.getdents64, [3, 0x7fffffffd520, 4096], 96, d)).toBe(
      'getdents64(3, 0x7fffffffd520 /* 4 entries */, 4096) = 96',
    )
    expect(formatSyscall(NR.getdents64, [3, 0x7fffffffd520, 4096], 0, d)).toBe(
      'getdents64(3, 0x7fffffffd520 /* 0 entries */, 4096) = 0',
    )
  })

  it('decodes terminal ioctls', () => {
    const tios = new Uint8Array(36)
    tios.set(u32s(0o2400, 0o5, 0o277, 0o105073))
    const m = mem()
      .put(0x7fffe000, tios)
      .put(0x7fffe100, new Uint8Array([10, 0, 0, 0, 0, 0, 0, 0]))
      .put(0x7fffe200, u32s(10578))
    const termios =
      '{c_iflag=ICRNL|IXON, c_oflag=NL0|CR0|TAB0|BS0|VT0|FF0|OPOST|ONLCR, c_cflag=B38400|CS8|CREAD, c_lflag=ISIG|ICANON|ECHO|ECHOE|ECHOK|IEXTEN|ECHOCTL|ECHOKE, ...}'
    expect(formatSyscall(NR.ioctl, [0, 0x5401, 0x7fffe000], 0, m)).toBe(`ioctl(0, TCGETS, ${termios}) = 0`)
    expect(formatSyscall(NR.ioctl, [0, 0x5402, 0x7fffe000], 0, m)).toBe(
      `ioctl(0, SNDCTL_TMR_START or TCSETS, ${termios}) = 0`,
    )
    expect(formatSyscall(NR.ioctl, [0, 0x5414, 0x7fffe100], 0, m)).toBe(
      'ioctl(0, TIOCSWINSZ, {ws_row=10, ws_col=0, ws_xpixel=0, ws_ypixel=0}) = 0',
    )
    expect(pid6(NR.ioctl, [0, 0x540f, 0x7fffe200], 0, m)).toBe('20148 ioctl(0, TIOCGPGRP, [10578])      = 0')
    expect(formatSyscall(NR.ioctl, [1, 0x5401, 0x7fffffffd030], -25, none)).toBe(
      'ioctl(1, TCGETS, 0x7fffffffd030)        = -1 ENOTTY (Inappropriate ioctl for device)',
    )
    expect(formatSyscall(NR.ioctl, [1, 0x5413, 0x7ffc6e5efce0], -25, m)).toBe(
      'ioctl(1, TIOCGWINSZ, 0x7ffc6e5efce0)    = -1 ENOTTY (Inappropriate ioctl for device)',
    )
    expect(pid6(NR.ioctl, [0, 0x5451, 0], 0, m)).toBe('20148 ioctl(0, FIOCLEX)                 = 0')
    expect(pid6(NR.ioctl, [0, 0x540e, 0], -1, m)).toBe(
      '20148 ioctl(0, TIOCSCTTY, 0)            = -1 EPERM (Operation not permitted)',
    )
    expect(formatSyscall(NR.ioctl, [0, 0x1234, 0], -25, m)).toBe(
      'ioctl(0, _IOC(_IOC_NONE, 0x12, 0x34, 0), 0) = -1 ENOTTY (Inappropriate ioctl for device)',
    )
    expect(formatSyscall(NR.ioctl, [0, 0x80047801, 0x7fffffffe5e0], -25, m)).toBe(
      'ioctl(0, _IOC(_IOC_READ, 0x78, 0x1, 0x4), 0x7fffffffe5e0) = -1 ENOTTY (Inappropriate ioctl for device)',
    )
  })
})

describe('formatSyscall: signals, processes and exec', () => {
  it('decodes rt_sigaction structs and flags', () => {
    const m = mem()
      .put(0x7fffffffcf20, u64s(0x55555555644d, 0x14000000, 0x7ffff7e10050, (1n << 1n) | (1n << 14n)))
      .put(0x100, u64s(1, 0x14000000, 0x409ef9, 0))
      .put(0x200, u64s(0, 0, 0, 0))
      .put(0x300, u64s(0, 0xc0000003, 0, 0xffffffffffffffffn))
    expect(formatSyscall(NR.rt_sigaction, [10, 0x7fffffffcf20, 0, 8], 0, m)).toBe(
      'rt_sigaction(SIGUSR1, {sa_handler=0x55555555644d, sa_mask=[INT TERM], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x7ffff7e10050}, NULL, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigaction, [13, 0x100, 0x200, 8], 0, m)).toBe(
      'rt_sigaction(SIGPIPE, {sa_handler=SIG_IGN, sa_mask=[], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x409ef9}, {sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigaction, [17, 0x300, 0, 8], 0, m)).toBe(
      'rt_sigaction(SIGCHLD, {sa_handler=SIG_DFL, sa_mask=~[], sa_flags=SA_NODEFER|SA_RESETHAND|SA_NOCLDSTOP|SA_NOCLDWAIT}, NULL, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigaction, [32, 0, 0x200, 8], 0, m)).toBe(
      'rt_sigaction(SIGRTMIN, NULL, {sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigaction, [64, 0, 0x200, 8], 0, m)).toBe(
      'rt_sigaction(SIGRT_32, NULL, {sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigaction, [65, 0, 0x7fffffffe590, 8], -22, m)).toBe(
      'rt_sigaction(65, NULL, 0x7fffffffe590, 8) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.rt_sigaction, [15, 0x10, 0x10, 8], -14, none)).toBe(
      'rt_sigaction(SIGTERM, 0x10, 0x10, 8)    = -1 EFAULT (Bad address)',
    )
  })

  it('prints signal sets, inverting those with two thirds or more set', () => {
    const bit = (...sigs: number[]) => sigs.reduce((m, s) => m | (1n << BigInt(s - 1)), 0n)
    const m = mem()
      .put(0x100, u64s(bit(17, 37)))
      .put(0x200, u64s(~bit(32, 33, 34)))
      .put(0x300, u64s(0))
      .put(0x400, u64s(~bit(9, 19, 32, 33, 34)))
      .put(0x500, u64s(bit(1, 31, 32, 64)))
      .put(0x600, u64s(bit(12)))
    expect(formatSyscall(NR.rt_sigprocmask, [0, 0x100, 0, 8], 0, m)).toBe(
      'rt_sigprocmask(SIG_BLOCK, [CHLD RT_5], NULL, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigprocmask, [0, 0x200, 0x300, 8], 0, m)).toBe(
      'rt_sigprocmask(SIG_BLOCK, ~[RTMIN RT_1 RT_2], [], 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigprocmask, [2, 0x400, 0, 8], 0, m)).toBe(
      'rt_sigprocmask(SIG_SETMASK, ~[KILL STOP RTMIN RT_1 RT_2], NULL, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigprocmask, [2, 0x500, 0, 8], 0, m)).toBe(
      'rt_sigprocmask(SIG_SETMASK, [HUP SYS RTMIN RT_32], NULL, 8) = 0',
    )
    expect(formatSyscall(NR.rt_sigprocmask, [5, 0x300, 0x7fffffffe588, 8], -22, m)).toBe(
      'rt_sigprocmask(0x5 /* SIG_??? */, [], 0x7fffffffe588, 8) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.rt_sigprocmask, [0, 0x7fffffffe588, 0x7fffffffe588, 4], -22, m)).toBe(
      'rt_sigprocmask(SIG_BLOCK, 0x7fffffffe588, 0x7fffffffe588, 4) = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.rt_sigpending, [0x600, 8], 0, m)).toBe(
      'rt_sigpending([USR2], 8)                = 0',
    )
    expect(formatSyscall(NR.rt_sigsuspend, [0x300, 8], -514, m)).toBe(
      'rt_sigsuspend([], 8)                    = ? ERESTARTNOHAND (To be restarted if no handler)',
    )
    const ss = mem().put(0x7000, u64s(0x40a260, 0, 65536))
    expect(formatSyscall(NR.sigaltstack, [0x7000, 0], 0, ss)).toBe(
      'sigaltstack({ss_sp=0x40a260, ss_flags=0, ss_size=65536}, NULL) = 0',
    )
  })

  it('names signals in kill and tgkill', () => {
    expect(formatSyscall(NR.kill, [8116, 10], 0, none)).toBe('kill(8116, SIGUSR1)                     = 0')
    expect(formatSyscall(NR.kill, [8116, 0], 0, none)).toBe('kill(8116, 0)                           = 0')
    expect(formatSyscall(NR.kill, [-1, 101], -22, none)).toBe(
      'kill(-1, 101)                           = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.kill, [99998, 33], -3, none)).toBe(
      'kill(99998, SIGRT_1)                    = -1 ESRCH (No such process)',
    )
    expect(formatSyscall(NR.tkill, [99999, 19], -3, none)).toBe(
      'tkill(99999, SIGSTOP)                   = -1 ESRCH (No such process)',
    )
    expect(formatSyscall(NR.tgkill, [8116, 8116, 10], 0, none)).toBe(
      'tgkill(8116, 8116, SIGUSR1)             = 0',
    )
  })

  it('decodes clone flags and the exit-time pointers', () => {
    expect(formatSyscall(NR.clone, [0x1200011, 0, 0, 0x7ffff7dd1a10, 0], 8118, none)).toBe(
      'clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ffff7dd1a10) = 8118',
    )
    expect(formatSyscall(NR.clone, [17, 0, 0, 0, 0], 10292, none)).toBe(
      'clone(child_stack=NULL, flags=SIGCHLD)  = 10292',
    )
    expect(formatSyscall(NR.clone, [0, 0, 0, 0, 0], 10298, none)).toBe(
      'clone(child_stack=NULL, flags=0)        = 10298',
    )
    expect(formatSyscall(NR.clone, [0x400000, 0, 0, 0, 0], 10306, none)).toBe(
      'clone(child_stack=NULL, flags=0x400000 /* CLONE_??? */) = 10306',
    )
    expect(formatSyscall(NR.clone, [0x8480200a, 0, 0, 0, 0], 10301, none)).toBe(
      'clone(child_stack=NULL, flags=CLONE_PTRACE|CLONE_UNTRACED|CLONE_NEWUTS|CLONE_IO|SIGUSR1) = 10301',
    )
    const pidfd = mem().put(0x7fffffffe584, u32s(6))
    expect(formatSyscall(NR.clone, [0x21000, 0, 0x7fffffffe584, 0, 0], 10300, pidfd)).toBe(
      'clone(child_stack=NULL, flags=CLONE_PIDFD|CLONE_NEWNS, parent_tid=[6]) = 10300',
    )
    // musl's pthread_create: a flag strace has no name for, then the outputs.
    const tid = mem().put(0x7f699d251f68, u32s(8955))
    const thread = startSyscall(
      NR.clone,
      [0x7d0f00, 0x7f699d251ee8, 0x7f699d251f68, 0x40a910, 0x7f699d251f38],
      tid,
    )
    expect(`[pid  8953] ${thread.interrupted()}`).toBe(
      '[pid  8953] clone(child_stack=0x7f699d251ee8, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID|0x400000 <unfinished ...>',
    )
    expect(`[pid  8953] ${thread.resumed(8955, tid, { column: 12 })}`).toBe(
      '[pid  8953] <... clone resumed>, parent_tid=[8955], tls=0x7f699d251f38, child_tidptr=0x40a910) = 8955',
    )
  })

  it('decodes clone3 and its => {parent_tid=[...]} on exit', () => {
    const args = u64s(
      0x3d0f00,
      0,
      0x7ffff7dd0990,
      0x7ffff7dd0990,
      0,
      0x7ffff75d0000,
      0x7fff80,
      0x7ffff7dd06c0,
      0,
      0,
      0,
    )
    const m = mem().put(0x7fffffffce80, args).put(0x7ffff7dd0990, u32s(8117))
    const call = startSyscall(NR.clone3, [0x7fffffffce80, 0x58], m)
    const struct =
      '{flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7ffff7dd0990, parent_tid=0x7ffff7dd0990, exit_signal=0, stack=0x7ffff75d0000, stack_size=0x7fff80, tls=0x7ffff7dd06c0}'
    expect(call.entry).toBe(`clone3(${struct}`)
    expect(call.finish(8117, m)).toBe(`clone3(${struct} => {parent_tid=[8117]}, 88) = 8117`)
    expect(`[pid  8116] ${call.resumed(8117, m, { column: 12 })}`).toBe(
      '[pid  8116] <... clone3 resumed> => {parent_tid=[8117]}, 88) = 8117',
    )
  })

  it('prints wait4 statuses and options', () => {
    const st = (status: number) => mem().put(0x7fffffffd13c, u32s(status))
    const wait = (pid: number, status: number, options: number, ret: number) =>
      formatSyscall(NR.wait4, [pid, 0x7fffffffd13c, options, 0], ret, st(status))
    expect(wait(8118, 0, 0, 8118)).toBe(
      'wait4(8118, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 8118',
    )
    expect(wait(-1, 5 << 8, 0x40000000, 8119)).toBe(
      'wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 5}], __WALL, NULL) = 8119',
    )
    expect(wait(8120, 15, 0, 8120)).toBe(
      'wait4(8120, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGTERM}], 0, NULL) = 8120',
    )
    expect(wait(10295, 0x86, 0, 10295)).toBe(
      'wait4(10295, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGABRT && WCOREDUMP(s)}], 0, NULL) = 10295',
    )
    expect(wait(10293, (19 << 8) | 0x7f, 2, 10293)).toBe(
      'wait4(10293, [{WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP}], WSTOPPED, NULL) = 10293',
    )
    expect(wait(10293, 0xffff, 8, 10293)).toBe('wait4(10293, [{WIFCONTINUED(s)}], WCONTINUED, NULL) = 10293')
    expect(wait(0xffffffff, 0, 1, 0)).toBe('wait4(-1, 0x7fffffffd13c, WNOHANG, NULL) = 0')
    expect(formatSyscall(NR.wait4, [0xffffffff, 0x7fffffffd13c, 0, 0x7fffffffd0a0], -10, none)).toBe(
      'wait4(-1, 0x7fffffffd13c, 0, 0x7fffffffd0a0) = -1 ECHILD (No child processes)',
    )
    expect(formatSyscall(NR.wait4, [-1, 0, 0xa000010b, 0], -22, none)).toBe(
      'wait4(-1, NULL, WNOHANG|WSTOPPED|WCONTINUED|__WCLONE|__WNOTHREAD|0x100, NULL) = -1 EINVAL (Invalid argument)',
    )
  })

  it('splits a call strace -f interrupts into <unfinished ...> and <... resumed>', () => {
    const m = mem().put(0x7fffffffd13c, u32s(0)).put(0x7fff0000, latin1('M\x1c\0\0L\x1c\0\0'))
    const wait = startSyscall(NR.wait4, [7245, 0x7fffffffd13c, 0, 0], m)
    expect(`[pid  7244] ${wait.interrupted()}`).toBe('[pid  7244] wait4(7245,  <unfinished ...>')
    expect(wait.resumed(7245, m)).toBe(
      '<... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 7245',
    )
    const read = startSyscall(NR.read, [3, 0x7fff0000, 8], m)
    expect(`[pid  7244] ${read.interrupted()}`).toBe('[pid  7244] read(3,  <unfinished ...>')
    expect(`[pid  7244] ${read.resumed(8, m, { column: 12 })}`).toBe(
      '[pid  7244] <... read resumed>"M\\34\\0\\0L\\34\\0\\0", 8) = 8',
    )
    const gettid = startSyscall(186, [], m)
    expect(`[pid  8117] ${gettid.interrupted()}`).toBe('[pid  8117] gettid( <unfinished ...>')
    expect(`[pid  7245] ${gettid.resumed(7245, m, { column: 12 })}`).toBe(
      '[pid  7245] <... gettid resumed>)       = 7245',
    )
    const exit = startSyscall(NR.exit_group, [0], m)
    expect(`[pid  7245] ${exit.interrupted()}`).toBe('[pid  7245] exit_group(0 <unfinished ...>')
    expect(`[pid  7245] ${exit.unfinished({ column: 12, resumed: true })}`).toBe(
      '[pid  7245] <... exit_group resumed>)   = ?',
    )
    const mask = mem().put(0x100, u64s(0))
    const sigmask = startSyscall(NR.rt_sigprocmask, [2, 0x100, 0, 8], mask)
    expect(`[pid  8116] ${sigmask.interrupted()}`).toBe(
      '[pid  8116] rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...>',
    )
    expect(`[pid  8116] ${sigmask.resumed(0, mask, { column: 12 })}`).toBe(
      '[pid  8116] <... rt_sigprocmask resumed>NULL, 8) = 0',
    )
  })

  it('prints calls that never return as = ?', () => {
    expect(formatUnfinishedSyscall(NR.exit_group, [0], none)).toBe(
      'exit_group(0)                           = ?',
    )
    expect(formatUnfinishedSyscall(NR.exit_group, [300], none)).toBe(
      'exit_group(300)                         = ?',
    )
    expect(`[pid  8117] ${formatUnfinishedSyscall(NR.exit, [0], none, { column: 12 })}`).toBe(
      '[pid  8117] exit(0)                     = ?',
    )
    // A task killed inside a call with outputs still pending.
    const ts = mem().put(0x7ffd0000, u64s(5, 0))
    expect(formatUnfinishedSyscall(NR.clock_nanosleep, [0, 0, 0x7ffd0000, 0x7ffd0010], ts)).toBe(
      'clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=5, tv_nsec=0},  <unfinished ...>) = ?',
    )
    expect(formatSyscall(NR.clock_nanosleep, [1, 0, 0x7ffd0000, 0], 0, ts)).toBe(
      'clock_nanosleep(CLOCK_MONOTONIC, 0, {tv_sec=5, tv_nsec=0}, NULL) = 0',
    )
  })

  it('prints execve argv and counts the environment', () => {
    const m = mem()
      .put(0x7fffffffd290, cstr('/bin/true'))
      .put(0x7fffffffd2a0, cstr('-l'))
      .put(0x7fffffffd2b0, cstr('A=1'))
      .put(0x7fffffffd000, u64s(0x7fffffffd290, 0x7fffffffd2a0, 0))
      .put(0x7fffffffd070, u64s(0x7fffffffd2b0, 0))
    expect(formatSyscall(NR.execve, [0x7fffffffd290, 0x7fffffffd000, 0x7fffffffd070], 0, m)).toBe(
      'execve("/bin/true", ["/bin/true", "-l"], 0x7fffffffd070 /* 1 var */) = 0',
    )
    // 39 arguments, one of them long: 32 shown, the long one cut at 32 bytes.
    const long = 'an-argument-that-is-longer-than-32-bytes'
    const argv = [0x7fffffffd290, 0x7fffffffd300, ...Array(37).fill(0x7fffffffd2a0), 0]
    const envp = [...Array(24).fill(0x7fffffffd2b0), 0]
    const big = mem()
      .put(0x7fffffffd290, cstr('/nonexistent'))
      .put(0x7fffffffd300, cstr(long))
      .put(0x7fffffffd2a0, cstr('x'))
      .put(0x7fffffffd2b0, cstr('A=1'))
      .put(0x7fffffffd400, u64s(...argv))
      .put(0x7fffffffdfd0, u64s(...envp))
    expect(formatSyscall(NR.execve, [0x7fffffffd290, 0x7fffffffd400, 0x7fffffffdfd0], ENOENT, big)).toBe(
      `execve("/nonexistent", ["/nonexistent", "an-argument-that-is-longer-than-"..., ${Array(30).fill('"x"').join(', ')}, ...], 0x7fffffffdfd0 /* 24 vars */) = -1 ENOENT (No such file or directory)`,
    )
    expect(pid6(NR.execve, [0x7fffffffd290, 0, 0], ENOENT, big)).toBe(
      '20148 execve("/nonexistent", NULL, NULL) = -1 ENOENT (No such file or directory)',
    )
    expect(pid6(NR.execve, [0x7fffffffd290, 8, 8], ENOENT, big)).toBe(
      '20148 execve("/nonexistent", 0x8, 0x8)  = -1 ENOENT (No such file or directory)',
    )
    const quoted = mem()
      .put(0x100, cstr('/nonexistent'))
      .put(0x200, cstr('"q"'))
      .put(0x210, cstr(''))
      .put(0x300, u64s(0x200, 0x210, 0))
      .put(0x7fffffffdfa8, u64s(0))
    expect(formatSyscall(NR.execve, [0x100, 0x300, 0x7fffffffdfa8], ENOENT, quoted)).toBe(
      'execve("/nonexistent", ["\\"q\\"", ""], 0x7fffffffdfa8 /* 0 vars */) = -1 ENOENT (No such file or directory)',
    )
  })

  it('keeps execve arguments decoded at entry when the image is replaced', () => {
    const before = mem()
      .put(0x1000, cstr('./bin/hello'))
      .put(0x2000, u64s(0x1000, 0))
      .put(0x3000, u64s(0x1000, 0x1000, 0))
    const call = startSyscall(NR.execve, [0x1000, 0x2000, 0x3000], before)
    expect(call.finish(0, mem())).toBe('execve("./bin/hello", ["./bin/hello"], 0x3000 /* 2 vars */) = 0')
  })
})

describe('formatSyscall: more file and process calls', () => {
  it('prints struct flock, and F_GETLK with l_pid on exit', () => {
    const m = mem()
      .put(0x100, latin1('\x01\0\0\0\0\0\0\0'))
      .put(0x108, u64s(0, 10, 0))
      .put(0x200, latin1('\x02\0\0\0\0\0\0\0'))
      .put(0x208, u64s(0, 10, 0))
    expect(formatSyscall(NR.fcntl, [3, 6, 0x100], 0, m)).toBe(
      'fcntl(3, F_SETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=10}) = 0',
    )
    expect(formatSyscall(NR.fcntl, [3, 5, 0x200], 0, m)).toBe(
      'fcntl(3, F_GETLK, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=0, l_len=10, l_pid=0}) = 0',
    )
    expect(formatSyscall(NR.fcntl, [3, 38, 0x200], 0, m)).toBe(
      'fcntl(3, F_OFD_SETLKW, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=0, l_len=10}) = 0',
    )
    expect(formatSyscall(NR.fcntl, [3, 8, 123], -3, m)).toBe(
      'fcntl(3, F_SETOWN, 123)                 = -1 ESRCH (No such process)',
    )
    expect(formatSyscall(NR.fcntl, [3, 10, 29], 0, m)).toBe('fcntl(3, F_SETSIG, SIGIO)               = 0')
    expect(formatSyscall(NR.fcntl, [3, 99, 5], -22, m)).toBe(
      'fcntl(3, 0x63 /* F_??? */, 0x5)         = -1 EINVAL (Invalid argument)',
    )
    expect(formatSyscall(NR.fcntl, [3, 1032, 0], EBADF, m)).toBe(
      'fcntl(3, F_GETPIPE_SZ)                  = -1 EBADF (Bad file descriptor)',
    )
  })

  it('shows readv buffers as addresses when it failed', () => {
    const m = mem().put(0x7fffffffe600, u64s(0x7fffffffe5f8, 8))
    expect(formatSyscall(NR.readv, [99, 0x7fffffffe600, 1], EBADF, m)).toBe(
      'readv(99, [{iov_base=0x7fffffffe5f8, iov_len=8}], 1) = -1 EBADF (Bad file descriptor)',
    )
    expect(formatSyscall(NR.getdents64, [99, 0x7fffffffe5f8, 8], EBADF, m)).toBe(
      'getdents64(99, 0x7fffffffe5f8, 8)       = -1 EBADF (Bad file descriptor)',
    )
  })

  it('prints *at calls, modes and readlink', () => {
    const m = mem().put(0x100, cstr('/tmp/st/dd')).put(0x200, cstr('/tmp/st/ll')).put(0x300, 'target??')
    expect(formatSyscall(258, [0xffffff9c, 0x100, 0o700], 0, m)).toBe(
      'mkdirat(AT_FDCWD, "/tmp/st/dd", 0700)   = 0',
    )
    expect(formatSyscall(263, [0xffffff9c, 0x100, 0x200], 0, m)).toBe(
      'unlinkat(AT_FDCWD, "/tmp/st/dd", AT_REMOVEDIR) = 0',
    )
    expect(formatSyscall(89, [0x200, 0x300, 8], 6, m)).toBe('readlink("/tmp/st/ll", "target", 8)     = 6')
    expect(formatSyscall(90, [0x200, 0o4755], 0, m)).toBe('chmod("/tmp/st/ll", 04755)              = 0')
    expect(formatSyscall(91, [3, 0o644], 0, m)).toBe('fchmod(3, 0644)                         = 0')
    expect(formatSyscall(37, [0], 0, m)).toBe('alarm(0)                                = 0')
    expect(formatSyscall(121, [0], 30634, m)).toBe('getpgid(0)                              = 30634')
  })

  it('prints wait4 rusage and sigaltstack and getrlimit outputs', () => {
    const m = mem()
      .put(0x7fffffffd0a0, u64s(0, 1602, 0, 0, ...Array(14).fill(0)))
      .put(0x7000, u64s(0, 2, 0))
      .put(0x7100, u64s(0, 0))
    expect(formatSyscall(NR.wait4, [30635, 0, 0, 0x7fffffffd0a0], 30635, m)).toBe(
      'wait4(30635, NULL, 0, {ru_utime={tv_sec=0, tv_usec=1602}, ru_stime={tv_sec=0, tv_usec=0}, ...}) = 30635',
    )
    expect(formatSyscall(NR.sigaltstack, [0, 0x7000], 0, m)).toBe(
      'sigaltstack(NULL, {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}) = 0',
    )
    expect(formatSyscall(97, [4, 0x7100], 0, m)).toBe('getrlimit(RLIMIT_CORE, {rlim_cur=0, rlim_max=0}) = 0')
    expect(formatSyscall(160, [4, 0x7100], 0, m)).toBe('setrlimit(RLIMIT_CORE, {rlim_cur=0, rlim_max=0}) = 0')
  })
})

describe('formatSignal', () => {
  it('prints signals sent by a process with si_pid and si_uid', () => {
    expect(formatSignal({ signo: 10, code: 0, pid: 8116, uid: 0 })).toBe(
      '--- SIGUSR1 {si_signo=SIGUSR1, si_code=SI_USER, si_pid=8116, si_uid=0} ---',
    )
    expect(formatSignal({ signo: 10, code: -6, pid: 7237, uid: 0 })).toBe(
      '--- SIGUSR1 {si_signo=SIGUSR1, si_code=SI_TKILL, si_pid=7237, si_uid=0} ---',
    )
    expect(formatSignal({ signo: 13, code: 0, pid: 20146, uid: 0 })).toBe(
      '--- SIGPIPE {si_signo=SIGPIPE, si_code=SI_USER, si_pid=20146, si_uid=0} ---',
    )
  })

  it('prints SIGCHLD with the status as a number or a signal', () => {
    expect(formatSignal({ signo: 17, code: 1, pid: 3, uid: 0, status: 0 })).toBe(
      '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---',
    )
    expect(formatSignal({ signo: 17, code: 2, pid: 8120, uid: 0, status: 15 })).toBe(
      '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=8120, si_uid=0, si_status=SIGTERM, si_utime=0, si_stime=0} ---',
    )
    expect(formatSignal({ signo: 17, code: 3, pid: 10295, uid: 0, status: 6 })).toBe(
      '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_DUMPED, si_pid=10295, si_uid=0, si_status=SIGABRT, si_utime=0, si_stime=0} ---',
    )
    expect(formatSignal({ signo: 17, code: 5, pid: 10293, uid: 0, status: 19 })).toBe(
      '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_STOPPED, si_pid=10293, si_uid=0, si_status=SIGSTOP, si_utime=0, si_stime=0} ---',
    )
    expect(formatSignal({ signo: 17, code: 6, pid: 10293, uid: 0, status: 18 })).toBe(
      '--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_CONTINUED, si_pid=10293, si_uid=0, si_status=SIGCONT, si_utime=0, si_stime=0} ---',
    )
  })

  it('prints faults with si_addr', () => {
    expect(formatSignal({ signo: 11, code: 1, addr: 0 })).toBe(
      '--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL} ---',
    )
    expect(formatSignal({ signo: 11, code: 1, addr: 0x1234 })).toBe(
      '--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x1234} ---',
    )
    expect(formatSignal({ signo: 11, code: 2, addr: 0x555555555279 })).toBe(
      '--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_ACCERR, si_addr=0x555555555279} ---',
    )
    expect(formatSignal({ signo: 4, code: 2, addr: 0x555555555308 })).toBe(
      '--- SIGILL {si_signo=SIGILL, si_code=ILL_ILLOPN, si_addr=0x555555555308} ---',
    )
    expect(formatSignal({ signo: 8, code: 3, addr: 0x4012dc })).toBe(
      '--- SIGFPE {si_signo=SIGFPE, si_code=FPE_FLTDIV, si_addr=0x4012dc} ---',
    )
    expect(formatSignal({ signo: 5, code: 0x80, addr: 0 })).toBe(
      '--- SIGTRAP {si_signo=SIGTRAP, si_code=SI_KERNEL, si_addr=NULL} ---',
    )
  })

  it('prints the value sigqueue sent', () => {
    expect(formatSignal({ signo: 12, code: -1, pid: 30634, uid: 0, value: 42 })).toBe(
      '--- SIGUSR2 {si_signo=SIGUSR2, si_code=SI_QUEUE, si_pid=30634, si_uid=0, si_int=42, si_ptr=0x2a} ---',
    )
  })

  it('prints kernel-sent signals without a source', () => {
    expect(formatSignal({ signo: 14, code: 0x80 })).toBe(
      '--- SIGALRM {si_signo=SIGALRM, si_code=SI_KERNEL} ---',
    )
    expect(formatSignal({ signo: 28, code: 0x80 })).toBe(
      '--- SIGWINCH {si_signo=SIGWINCH, si_code=SI_KERNEL} ---',
    )
  })
})

describe('formatExit', () => {
  it('prints exits and deaths by signal', () => {
    expect(formatExit({ code: 0 })).toBe('+++ exited with 0 +++')
    expect(formatExit({ code: 44 })).toBe('+++ exited with 44 +++')
    expect(formatExit({ signal: 15 })).toBe('+++ killed by SIGTERM +++')
    expect(formatExit({ signal: 9 })).toBe('+++ killed by SIGKILL +++')
    expect(formatExit({ signal: 6, core: true })).toBe('+++ killed by SIGABRT (core dumped) +++')
  })
})
