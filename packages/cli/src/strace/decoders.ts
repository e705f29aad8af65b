// The calls decoded argument by argument, keyed by name, each printing what
// strace 6.x prints for it. Calls not listed here get the raw-hex fallback
// in format-syscall.ts.

import { type Decoder, type EntryView, type ExitView, later, output, type Part } from './decoder.js'
import {
  ACCESS_MODES,
  AT_FLAGS,
  DUP3_FLAGS,
  dirfd,
  F,
  FACCESSAT_FLAGS,
  FCNTL_CMDS,
  FD_FLAGS,
  O_CREAT,
  O_TMPFILE_BIT,
  openFlags,
  PIPE_FLAGS,
  WHENCE,
} from './file-flags.js'
import { futexArgs } from './futex.js'
import { ioctlArg, ioctlCommandText } from './ioctl.js'
import { readBytes, readStruct, type StraceMemory, StructView } from './memory.js'
import { MADVISE, mapFlagsText, protText } from './mm-flags.js'
import { hex, int32, octalMode, pointer, signedDecimal, u64, uint32, unsignedDecimal } from './numbers.js'
import {
  CLONE,
  CLONE3_FLAGS,
  cloneFlagsText,
  rlimitAt,
  rlimitResourceText,
  WAIT_OPTIONS,
  waitStatusAt,
} from './process-flags.js'
import { formatBuffer, formatCString, formatPath, MAX_STRLEN } from './quote.js'
import { SIGPROCMASK_HOW, sigactionAt, signalText, sigsetAt, stackAt } from './signals.js'
import { flockAt, iovecArrayAt, rusageAt, statAt, timespecAt, utsnameAt } from './structs.js'
import { flags, type Xlat, xval } from './xlat.js'

const fd = (v: number) => String(int32(v))
const int = (v: number) => String(int32(v))
const mode = (v: number) => octalMode(uint32(v))
const sig = (v: number) => signalText(int32(v))

/** An int at addr in brackets, [8117] (printnum_int). */
function intAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 4)
  return s ? `[${s.i32(0)}]` : hex(addr)
}

/** argv: ["ls", "-l"], at most 32 strings then "..." (printargv). */
function argvAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const items: string[] = []
  for (let n = 0; ; n++) {
    const s = readStruct(mem, addr + n * 8, 8)
    if (!s) {
      if (n === 0) return hex(addr)
      items.push(`... /* ${hex(addr + n * 8)} */`)
      break
    }
    const word = s.u64(0)
    if (word === 0n) break
    if (n + 1 > MAX_STRLEN) {
      items.push('...')
      break
    }
    items.push(formatCString(mem, Number(word)))
  }
  return `[${items.join(', ')}]`
}

/** envp, abbreviated: 0x7ffd... /* 20 vars *\/ (printargc). */
function envCountAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  let n = 0
  for (; ; n++) {
    const s = readStruct(mem, addr + n * 8, 8)
    if (!s) {
      if (n === 0) return hex(addr)
      break
    }
    if (s.u64(0) === 0n) break
  }
  return `${hex(addr)} /* ${n} var${n === 1 ? '' : 's'} */`
}

/** pipe's int[2]: [3, 4]. */
function fdPairAt(mem: StraceMemory, addr: number): string {
  const s = readStruct(mem, addr, 8)
  return s ? `[${s.i32(0)}, ${s.i32(4)}]` : hex(addr)
}

/** getdents64's buffer, abbreviated to its address and entry count. */
function direntsAt(x: ExitView, addr: number): string {
  const len = x.ret < 19 ? 0 : Math.min(x.ret, 1024 * 1024)
  const bytes = len ? readBytes(x.mem, addr, len) : new Uint8Array(0)
  if (!bytes) return pointer(addr)
  const view = new StructView(bytes)
  let count = 0
  for (let i = 0; len && i <= len - 19; count++) {
    const reclen = view.u16(i + 16)
    if (reclen < 19) break
    i += reclen
  }
  return `${pointer(addr)} /* ${count} entries */`
}

const GRND_FLAGS: Xlat = [
  [1, 'GRND_NONBLOCK'],
  [2, 'GRND_RANDOM'],
  [4, 'GRND_INSECURE'],
]
const RSEQ_FLAGS: Xlat = [[1, 'RSEQ_FLAG_UNREGISTER']]
const TIMER_FLAGS: Xlat = [[1, 'TIMER_ABSTIME']]
const CLOCKS: Xlat = [
  [0, 'CLOCK_REALTIME'],
  [1, 'CLOCK_MONOTONIC'],
  [2, 'CLOCK_PROCESS_CPUTIME_ID'],
  [3, 'CLOCK_THREAD_CPUTIME_ID'],
  [4, 'CLOCK_MONOTONIC_RAW'],
  [5, 'CLOCK_REALTIME_COARSE'],
  [6, 'CLOCK_MONOTONIC_COARSE'],
  [7, 'CLOCK_BOOTTIME'],
  [8, 'CLOCK_REALTIME_ALARM'],
  [9, 'CLOCK_BOOTTIME_ALARM'],
  [11, 'CLOCK_TAI'],
]
const ARCH_PRCTL: Xlat = [
  [0x1001, 'ARCH_SET_GS'],
  [0x1002, 'ARCH_SET_FS'],
  [0x1003, 'ARCH_GET_FS'],
  [0x1004, 'ARCH_GET_GS'],
  [0x1011, 'ARCH_GET_CPUID'],
  [0x1012, 'ARCH_SET_CPUID'],
  [0x1021, 'ARCH_GET_XCOMP_SUPP'],
  [0x1022, 'ARCH_GET_XCOMP_PERM'],
  [0x1023, 'ARCH_REQ_XCOMP_PERM'],
  [0x1024, 'ARCH_GET_XCOMP_GUEST_PERM'],
  [0x1025, 'ARCH_REQ_XCOMP_GUEST_PERM'],
  [0x2001, 'ARCH_MAP_VDSO_X32'],
  [0x2002, 'ARCH_MAP_VDSO_32'],
  [0x2003, 'ARCH_MAP_VDSO_64'],
]

const ERESTART_SIGNALLED = (x: ExitView) => x.failed && -x.ret >= 512 && -x.ret <= 516

/** A call whose arguments are each printed on entry by one function. */
function simple(...printers: ((c: EntryView, v: number) => string)[]): Decoder {
  return { args: (c) => printers.map((p, i) => p(c, c.args[i])) }
}

const P = {
  fd: (_c: EntryView, v: number) => fd(v),
  int: (_c: EntryView, v: number) => int(v),
  dirfd: (_c: EntryView, v: number) => dirfd(v),
  path: (c: EntryView, v: number) => formatPath(c.mem, v),
  mode: (_c: EntryView, v: number) => mode(v),
  ptr: (_c: EntryView, v: number) => pointer(v),
  size: (_c: EntryView, v: number) => unsignedDecimal(v),
  off: (_c: EntryView, v: number) => signedDecimal(v),
  sig: (_c: EntryView, v: number) => sig(v),
}

function openArgs(c: EntryView, at: boolean): Part[] {
  const a = c.args
  const i = at ? 1 : 0
  const parts: Part[] = at ? [dirfd(a[0])] : []
  parts.push(formatPath(c.mem, a[i]), openFlags(a[i + 1]))
  if (uint32(a[i + 1]) & (O_CREAT | O_TMPFILE_BIT)) parts.push(mode(a[i + 2]))
  return parts
}

function fcntlArgs(c: EntryView): Part[] {
  const a = c.args
  const cmd = int32(a[1])
  const parts: Part[] = [fd(a[0]), xval(FCNTL_CMDS, uint32(a[1]), 'F_???')]
  switch (cmd) {
    case F.DUPFD:
    case F.DUPFD_CLOEXEC:
    case F.SETOWN:
    case F.SETPIPE_SZ:
      parts.push(int(a[2]))
      break
    case F.SETFD:
      parts.push(flags(FD_FLAGS, uint32(a[2]), 'FD_???'))
      break
    case F.SETFL:
      parts.push(openFlags(a[2]))
      break
    case F.SETSIG:
      parts.push(sig(a[2]))
      break
    case F.SETLK:
    case F.SETLKW:
    case F.OFD_SETLK:
    case F.OFD_SETLKW:
      parts.push(flockAt(c.mem, a[2], false))
      break
    case F.GETLK:
    case F.OFD_GETLK:
      parts.push(output(a[2], (x) => flockAt(x.mem, a[2], true)))
      break
    case F.GETFD:
    case F.GETFL:
    case F.GETOWN:
    case F.GETSIG:
    case F.GETLEASE:
    case F.GETPIPE_SZ:
    case F.GET_SEALS:
      break
    default:
      parts.push(hex(a[2]))
  }
  return parts
}

function fcntlResult(x: ExitView): string {
  switch (int32(x.args[1])) {
    case F.GETFD:
      return x.ret === 0 ? '0' : `${hex(x.ret)} (flags ${flags(FD_FLAGS, x.ret)})`
    case F.GETFL:
      return `${hex(x.ret)} (flags ${openFlags(x.ret)})`
    default:
      return String(x.ret)
  }
}

function cloneArgs(c: EntryView): Part[] {
  // x86-64 order: flags, stack, parent_tid, child_tid, tls.
  const [flagsArg, stack, ptid, ctid, tls] = c.args
  const f = Number(u64(flagsArg) & 0xffffffffn)
  const parts: Part[] = [`child_stack=${pointer(stack)}`, `flags=${cloneFlagsText(flagsArg)}`]
  const outputs = CLONE.PARENT_SETTID | CLONE.PIDFD | CLONE.CHILD_SETTID | CLONE.CHILD_CLEARTID | CLONE.SETTLS
  if (f & outputs) {
    parts.push({
      glued: true,
      exit: (x) => {
        const at = (addr: number) => (x.failed && addr !== 0 ? hex(addr) : intAt(x.mem, addr))
        let text = ''
        if (f & (CLONE.PARENT_SETTID | CLONE.PIDFD)) text += `, parent_tid=${at(ptid)}`
        if (f & CLONE.SETTLS) text += `, tls=${pointer(tls)}`
        if (f & (CLONE.CHILD_SETTID | CLONE.CHILD_CLEARTID)) text += `, child_tidptr=${pointer(ctid)}`
        return text
      },
    })
  }
  return parts
}

// struct clone_args: the fields strace needs and the sizes it accepts.
const CLONE_ARGS_MIN = 64
const CLONE_ARGS_SIZE = 88

function clone3Args(c: EntryView): Part[] {
  const [addr, sizeArg] = c.args
  const size = Number(u64(sizeArg) > BigInt(CLONE_ARGS_SIZE) ? CLONE_ARGS_SIZE : u64(sizeArg))
  const sizeText = unsignedDecimal(sizeArg)
  if (size < CLONE_ARGS_MIN) return [hex(addr), sizeText]
  const s = readStruct(c.mem, addr, size)
  if (!s) return [pointer(addr), sizeText]
  const f = s.u64(0)
  const has = (bit: number) => (f & BigInt(bit)) !== 0n
  let text = `{flags=${flags(CLONE3_FLAGS, f, 'CLONE_???')}`
  if (has(CLONE.PIDFD)) text += `, pidfd=${pointer(s.u64(8))}`
  if (has(CLONE.CHILD_SETTID | CLONE.CHILD_CLEARTID)) text += `, child_tid=${pointer(s.u64(16))}`
  if (has(CLONE.PARENT_SETTID)) text += `, parent_tid=${pointer(s.u64(24))}`
  const exitSignal = s.u64(32)
  text += `, exit_signal=${exitSignal < 0x7fffffffn ? signalText(Number(exitSignal)) : exitSignal}`
  text += `, stack=${pointer(s.u64(40))}, stack_size=${hex(s.u64(48))}`
  if (has(CLONE.SETTLS)) text += `, tls=${pointer(s.u64(56))}`
  // Fields past the size the caller gave (CLONE_ARGS_SIZE_VER0 is 64) are not there.
  const field = (off: number) => (off + 8 <= size ? s.u64(off) : 0n)
  const setTid = field(64)
  const setTidSize = field(72)
  if (setTid || setTidSize) text += `, set_tid=${pointer(setTid)}, set_tid_size=${setTidSize}`
  if (size > 80 && (field(80) || f & 0x200000000n)) text += `, cgroup=${field(80)}`
  text += '}'
  if (!has(CLONE.PIDFD | CLONE.PARENT_SETTID)) return [text, sizeText]
  return [
    text,
    {
      glued: true,
      exit: (x) => {
        if (x.failed) return ''
        const now = readStruct(x.mem, addr, size)
        if (!now) return ` => ${hex(addr)}`
        const fields: string[] = []
        if (has(CLONE.PIDFD)) fields.push(`pidfd=${intAt(x.mem, Number(now.u64(8)))}`)
        if (has(CLONE.PARENT_SETTID)) fields.push(`parent_tid=${intAt(x.mem, Number(now.u64(24)))}`)
        return ` => {${fields.join(', ')}}`
      },
    },
    sizeText,
  ]
}

export const DECODERS: Readonly<Record<string, Decoder>> = {
  read: {
    args: ({ args: a }) => [
      fd(a[0]),
      later((x) => (x.failed ? pointer(a[1]) : formatBuffer(x.mem, a[1], x.ret))),
      unsignedDecimal(a[2]),
    ],
  },
  write: {
    args: ({ args: a, mem }) => [fd(a[0]), formatBuffer(mem, a[1], Number(u64(a[2]))), unsignedDecimal(a[2])],
  },
  pread64: {
    args: ({ args: a }) => [
      fd(a[0]),
      later((x) => (x.failed ? pointer(a[1]) : formatBuffer(x.mem, a[1], x.ret))),
      unsignedDecimal(a[2]),
      signedDecimal(a[3]),
    ],
  },
  pwrite64: {
    args: ({ args: a, mem }) => [
      fd(a[0]),
      formatBuffer(mem, a[1], Number(u64(a[2]))),
      unsignedDecimal(a[2]),
      signedDecimal(a[3]),
    ],
  },
  readv: {
    args: ({ args: a }) => [
      fd(a[0]),
      later((x) => iovecArrayAt(x.mem, a[1], Number(u64(a[2])), x.failed ? null : x.ret)),
      unsignedDecimal(a[2]),
    ],
  },
  writev: {
    args: ({ args: a, mem }) => [
      fd(a[0]),
      iovecArrayAt(mem, a[1], Number(u64(a[2])), -1),
      unsignedDecimal(a[2]),
    ],
  },
  open: { args: (c) => openArgs(c, false) },
  openat: { args: (c) => openArgs(c, true) },
  creat: simple(P.path, P.mode),
  close: simple(P.fd),
  dup: simple(P.fd),
  dup2: simple(P.fd, P.fd),
  dup3: simple(P.fd, P.fd, (_c, v) => flags(DUP3_FLAGS, uint32(v), 'O_???')),
  stat: { args: ({ args: a, mem }) => [formatPath(mem, a[0]), output(a[1], (x) => statAt(x.mem, a[1]))] },
  lstat: { args: ({ args: a, mem }) => [formatPath(mem, a[0]), output(a[1], (x) => statAt(x.mem, a[1]))] },
  fstat: { args: ({ args: a }) => [fd(a[0]), output(a[1], (x) => statAt(x.mem, a[1]))] },
  newfstatat: {
    args: ({ args: a, mem }) => [
      dirfd(a[0]),
      formatPath(mem, a[1]),
      output(a[2], (x) => statAt(x.mem, a[2])),
      flags(AT_FLAGS, uint32(a[3]), 'AT_???'),
    ],
  },
  lseek: simple(P.fd, P.off, (_c, v) => xval(WHENCE, uint32(v), 'SEEK_???')),
  mmap: {
    args: ({ args: a }) => [
      pointer(a[0]),
      unsignedDecimal(a[1]),
      protText(a[2]),
      mapFlagsText(a[3]),
      fd(a[4]),
      hex(a[5]),
    ],
    ret: (x) => hex(x.ret),
  },
  mprotect: simple(P.ptr, P.size, (_c, v) => protText(v)),
  munmap: simple(P.ptr, P.size),
  brk: { args: ({ args: a }) => [pointer(a[0])], ret: (x) => hex(x.ret) },
  madvise: simple(P.ptr, P.size, (_c, v) => xval(MADVISE, int32(v) >>> 0, 'MADV_???')),
  ioctl: {
    args: ({ args: a, mem }) => {
      const parts: Part[] = [fd(a[0]), ioctlCommandText(a[1])]
      const arg = ioctlArg(a[1])
      if (arg.when === 'entry') parts.push(arg.print(mem, a[2]))
      else if (arg.when === 'exit') parts.push(output(a[2], (x) => arg.print(x.mem, a[2])))
      return parts
    },
  },
  access: simple(P.path, (_c, v) => flags(ACCESS_MODES, uint32(v), '?_OK')),
  faccessat: simple(P.dirfd, P.path, (_c, v) => flags(ACCESS_MODES, uint32(v), '?_OK')),
  faccessat2: simple(
    P.dirfd,
    P.path,
    (_c, v) => flags(ACCESS_MODES, uint32(v), '?_OK'),
    (_c, v) => flags(FACCESSAT_FLAGS, uint32(v), 'AT_???'),
  ),
  pipe: { args: ({ args: a }) => [output(a[0], (x) => fdPairAt(x.mem, a[0]))] },
  pipe2: {
    args: ({ args: a }) => [
      output(a[0], (x) => fdPairAt(x.mem, a[0])),
      flags(PIPE_FLAGS, uint32(a[1]), 'O_???'),
    ],
  },
  fcntl: { args: fcntlArgs, ret: fcntlResult },
  getdents64: {
    args: ({ args: a }) => [
      fd(a[0]),
      later((x) => (x.failed ? pointer(a[1]) : direntsAt(x, a[1]))),
      unsignedDecimal(uint32(a[2])),
    ],
  },
  getcwd: {
    args: ({ args: a }) => [
      later((x) => (x.failed ? pointer(a[0]) : formatPath(x.mem, a[0], x.ret))),
      unsignedDecimal(a[1]),
    ],
  },
  chdir: simple(P.path),
  fchdir: simple(P.fd),
  mkdir: simple(P.path, P.mode),
  mkdirat: simple(P.dirfd, P.path, P.mode),
  rmdir: simple(P.path),
  unlink: simple(P.path),
  unlinkat: simple(P.dirfd, P.path, (_c, v) => flags(AT_FLAGS, uint32(v), 'AT_???')),
  rename: simple(P.path, P.path),
  renameat: simple(P.dirfd, P.path, P.dirfd, P.path),
  link: simple(P.path, P.path),
  symlink: simple(P.path, P.path),
  symlinkat: simple(P.path, P.dirfd, P.path),
  readlink: {
    args: ({ args: a, mem }) => [
      formatPath(mem, a[0]),
      later((x) => (x.failed ? pointer(a[1]) : formatBuffer(x.mem, a[1], x.ret))),
      unsignedDecimal(a[2]),
    ],
  },
  chmod: simple(P.path, P.mode),
  fchmod: simple(P.fd, P.mode),
  fchmodat: simple(P.dirfd, P.path, P.mode),
  umask: { args: ({ args: a }) => [mode(a[0])], ret: (x) => octalMode(x.ret) },
  truncate: simple(P.path, P.off),
  ftruncate: simple(P.fd, P.off),
  fsync: simple(P.fd),
  fdatasync: simple(P.fd),
  alarm: simple((_c, v) => String(uint32(v))),
  getpgid: simple(P.int),
  getsid: simple(P.int),
  setpgid: simple(P.int, P.int),
  execve: {
    args: ({ args: a, mem }) => [formatPath(mem, a[0]), argvAt(mem, a[1]), envCountAt(mem, a[2])],
  },
  execveat: {
    args: ({ args: a, mem }) => [
      dirfd(a[0]),
      formatPath(mem, a[1]),
      argvAt(mem, a[2]),
      envCountAt(mem, a[3]),
      flags(AT_FLAGS, uint32(a[4]), 'AT_???'),
    ],
  },
  exit: simple(P.int),
  exit_group: simple(P.int),
  clone: { args: cloneArgs },
  clone3: { args: clone3Args },
  wait4: {
    args: ({ args: a }) => [
      int(a[0]),
      later((x) =>
        x.ret === 0 ? pointer(a[1]) : a[1] !== 0 && x.failed ? hex(a[1]) : waitStatusAt(x.mem, a[1]),
      ),
      flags(WAIT_OPTIONS, uint32(a[2]), 'W???'),
      later((x) => (x.ret > 0 ? rusageAt(x.mem, a[3]) : pointer(a[3]))),
    ],
  },
  kill: simple(P.int, P.sig),
  tkill: simple(P.int, P.sig),
  tgkill: simple(P.int, P.int, P.sig),
  rt_sigaction: {
    args: ({ args: a, mem }) => [
      sig(a[0]),
      sigactionAt(mem, a[1]),
      output(a[2], (x) => sigactionAt(x.mem, a[2])),
      unsignedDecimal(a[3]),
    ],
  },
  rt_sigprocmask: {
    args: ({ args: a, mem }) => [
      xval(SIGPROCMASK_HOW, uint32(a[0]), 'SIG_???'),
      sigsetAt(mem, a[1], Number(u64(a[3]))),
      output(a[2], (x) => sigsetAt(x.mem, a[2], Number(u64(a[3])))),
      unsignedDecimal(a[3]),
    ],
  },
  rt_sigpending: {
    args: ({ args: a }) => [
      output(a[0], (x) => sigsetAt(x.mem, a[0], Number(u64(a[1])))),
      unsignedDecimal(a[1]),
    ],
  },
  rt_sigsuspend: {
    args: ({ args: a, mem }) => [sigsetAt(mem, a[0], Number(u64(a[1]))), unsignedDecimal(a[1])],
  },
  sigaltstack: {
    args: ({ args: a, mem }) => [stackAt(mem, a[0]), output(a[1], (x) => stackAt(x.mem, a[1]))],
  },
  futex: { args: ({ args, mem }) => futexArgs(args, mem) },
  set_robust_list: simple(P.ptr, P.size),
  set_tid_address: simple(P.ptr),
  rseq: simple(
    P.ptr,
    (_c, v) => hex(uint32(v)),
    (_c, v) => flags(RSEQ_FLAGS, uint32(v), 'RSEQ_FLAG_???'),
    (_c, v) => hex(uint32(v)),
  ),
  arch_prctl: {
    args: ({ args: a }) => {
      const code = int32(a[0])
      const name = xval(ARCH_PRCTL, uint32(a[0]), 'ARCH_???')
      // ARCH_GET_FS/GS store the base at the address: shown as [0x...] on exit.
      if (code === 0x1003 || code === 0x1004)
        return [
          name,
          output(a[1], (x) => {
            const s = readStruct(x.mem, a[1], 8)
            return s ? `[${hex(s.u64(0))}]` : hex(a[1])
          }),
        ]
      return [name, hex(a[1])]
    },
  },
  uname: { args: ({ args: a }) => [output(a[0], (x) => utsnameAt(x.mem, a[0]))] },
  getrandom: {
    args: ({ args: a }) => [
      later((x) => (x.failed ? pointer(a[0]) : formatBuffer(x.mem, a[0], x.ret, true))),
      unsignedDecimal(a[1]),
      flags(GRND_FLAGS, uint32(a[2]), 'GRND_???'),
    ],
  },
  prlimit64: {
    args: ({ args: a, mem }) => [
      int(a[0]),
      rlimitResourceText(a[1]),
      rlimitAt(mem, a[2]),
      output(a[3], (x) => rlimitAt(x.mem, a[3])),
    ],
  },
  getrlimit: {
    args: ({ args: a }) => [rlimitResourceText(a[0]), output(a[1], (x) => rlimitAt(x.mem, a[1]))],
  },
  setrlimit: simple(
    (_c, v) => rlimitResourceText(v),
    (c, v) => rlimitAt(c.mem, v),
  ),
  nanosleep: {
    args: ({ args: a, mem }) => [
      timespecAt(mem, a[0]),
      // The remainder is only meaningful when a signal cut the sleep short.
      later((x) => (ERESTART_SIGNALLED(x) ? timespecAt(x.mem, a[1]) : pointer(a[1]))),
    ],
  },
  clock_nanosleep: {
    args: ({ args: a, mem }) => [
      xval(CLOCKS, uint32(a[0]), 'CLOCK_???'),
      flags(TIMER_FLAGS, uint32(a[1]), 'TIMER_???'),
      timespecAt(mem, a[2]),
      later((x) => (ERESTART_SIGNALLED(x) ? timespecAt(x.mem, a[3]) : pointer(a[3]))),
    ],
  },
  clock_gettime: {
    args: ({ args: a }) => [
      xval(CLOCKS, uint32(a[0]), 'CLOCK_???'),
      output(a[1], (x) => timespecAt(x.mem, a[1])),
    ],
  },
  clock_getres: {
    args: ({ args: a }) => [
      xval(CLOCKS, uint32(a[0]), 'CLOCK_???'),
      output(a[1], (x) => timespecAt(x.mem, a[1])),
    ],
  },
}
