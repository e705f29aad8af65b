// ioctl(2): the command's name (terminal and FIO* requests, else strace's
// _IOC(...) spelling) and, for the terminal requests strace decodes, the
// argument: struct termios abbreviated, struct winsize, an int in brackets.

import { readStruct, type StraceMemory } from './memory.js'
import { hex, int32, uint32 } from './numbers.js'
import { flags, type Xlat, xval } from './xlat.js'

// Requests 0x5402-0x5404 are also OSS sequencer ioctls; without knowing the
// fd is a tty strace names both.
const IOCTL_NAMES: Xlat = [
  [0x5401, 'TCGETS'],
  [0x5402, 'SNDCTL_TMR_START or TCSETS'],
  [0x5403, 'SNDCTL_TMR_STOP or TCSETSW'],
  [0x5404, 'SNDCTL_TMR_CONTINUE or TCSETSF'],
  [0x5405, 'TCGETA'],
  [0x5406, 'TCSETA'],
  [0x5407, 'TCSETAW'],
  [0x5408, 'TCSETAF'],
  [0x5409, 'TCSBRK'],
  [0x540a, 'TCXONC'],
  [0x540b, 'TCFLSH'],
  [0x540c, 'TIOCEXCL'],
  [0x540d, 'TIOCNXCL'],
  [0x540e, 'TIOCSCTTY'],
  [0x540f, 'TIOCGPGRP'],
  [0x5410, 'TIOCSPGRP'],
  [0x5411, 'TIOCOUTQ'],
  [0x5412, 'TIOCSTI'],
  [0x5413, 'TIOCGWINSZ'],
  [0x5414, 'TIOCSWINSZ'],
  [0x5415, 'TIOCMGET'],
  [0x5416, 'TIOCMBIS'],
  [0x5417, 'TIOCMBIC'],
  [0x5418, 'TIOCMSET'],
  [0x5419, 'TIOCGSOFTCAR'],
  [0x541a, 'TIOCSSOFTCAR'],
  [0x541b, 'FIONREAD'],
  [0x541c, 'TIOCLINUX'],
  [0x541d, 'TIOCCONS'],
  [0x541e, 'TIOCGSERIAL'],
  [0x541f, 'TIOCSSERIAL'],
  [0x5420, 'TIOCPKT'],
  [0x5421, 'FIONBIO'],
  [0x5422, 'TIOCNOTTY'],
  [0x5423, 'TIOCSETD'],
  [0x5424, 'TIOCGETD'],
  [0x5425, 'TCSBRKP'],
  [0x5427, 'TIOCSBRK'],
  [0x5428, 'TIOCCBRK'],
  [0x5429, 'TIOCGSID'],
  [0x80045430, 'TIOCGPTN'],
  [0x40045431, 'TIOCSPTLCK'],
  [0x5441, 'TIOCGPTPEER'],
  [0x5450, 'FIONCLEX'],
  [0x5451, 'FIOCLEX'],
  [0x5452, 'FIOASYNC'],
]

const IOC_DIRS = ['_IOC_NONE', '_IOC_WRITE', '_IOC_READ', '_IOC_READ|_IOC_WRITE']

/** The request: its name, else _IOC(_IOC_READ, 0x78, 0x1, 0x4). */
export function ioctlCommandText(cmd: number): string {
  const c = uint32(cmd)
  const name = IOCTL_NAMES.find(([k]) => k === c)?.[1]
  if (name) return name
  return `_IOC(${IOC_DIRS[c >>> 30]}, ${hex((c >>> 8) & 0xff)}, ${hex(c & 0xff)}, ${hex((c >>> 16) & 0x3fff)})`
}

const IFLAGS: Xlat = [
  [0o1, 'IGNBRK'],
  [0o2, 'BRKINT'],
  [0o4, 'IGNPAR'],
  [0o10, 'PARMRK'],
  [0o20, 'INPCK'],
  [0o40, 'ISTRIP'],
  [0o100, 'INLCR'],
  [0o200, 'IGNCR'],
  [0o400, 'ICRNL'],
  [0o1000, 'IUCLC'],
  [0o2000, 'IXON'],
  [0o4000, 'IXANY'],
  [0o10000, 'IXOFF'],
  [0o20000, 'IMAXBEL'],
  [0o40000, 'IUTF8'],
]
const OFLAGS: Xlat = [
  [0o1, 'OPOST'],
  [0o2, 'OLCUC'],
  [0o4, 'ONLCR'],
  [0o10, 'OCRNL'],
  [0o20, 'ONOCR'],
  [0o40, 'ONLRET'],
  [0o100, 'OFILL'],
  [0o200, 'OFDEL'],
]
// The delay fields, in the order strace prints them.
const ODELAYS: readonly (readonly [number, readonly string[]])[] = [
  [0o400, ['NL0', 'NL1']],
  [0o3000, ['CR0', 'CR1', 'CR2', 'CR3']],
  [0o14000, ['TAB0', 'TAB1', 'TAB2', 'TAB3']],
  [0o20000, ['BS0', 'BS1']],
  [0o40000, ['VT0', 'VT1']],
  [0o100000, ['FF0', 'FF1']],
]
const BAUDS = [
  'B0',
  'B50',
  'B75',
  'B110',
  'B134',
  'B150',
  'B200',
  'B300',
  'B600',
  'B1200',
  'B1800',
  'B2400',
  'B4800',
  'B9600',
  'B19200',
  'B38400',
]
const HIGH_BAUDS = [
  'BOTHER',
  'B57600',
  'B115200',
  'B230400',
  'B460800',
  'B500000',
  'B576000',
  'B921600',
  'B1000000',
  'B1152000',
  'B1500000',
  'B2000000',
  'B2500000',
  'B3000000',
  'B3500000',
  'B4000000',
]
const CFLAGS: Xlat = [
  [0o100, 'CSTOPB'],
  [0o200, 'CREAD'],
  [0o400, 'PARENB'],
  [0o1000, 'PARODD'],
  [0o2000, 'HUPCL'],
  [0o4000, 'CLOCAL'],
  [0o10000000000, 'CMSPAR'],
  [0o20000000000, 'CRTSCTS'],
]
const LFLAGS: Xlat = [
  [0o1, 'ISIG'],
  [0o2, 'ICANON'],
  [0o4, 'XCASE'],
  [0o10, 'ECHO'],
  [0o20, 'ECHOE'],
  [0o40, 'ECHOK'],
  [0o100, 'ECHONL'],
  [0o200, 'NOFLSH'],
  [0o100000, 'IEXTEN'],
  [0o1000, 'ECHOCTL'],
  [0o2000, 'ECHOPRT'],
  [0o4000, 'ECHOKE'],
  [0o10000, 'FLUSHO'],
  [0o40000, 'PENDIN'],
  [0o400, 'TOSTOP'],
  [0o200000, 'EXTPROC'],
]

function baud(code: number): string {
  return code & 0o10000 ? HIGH_BAUDS[code & 0o17] : BAUDS[code & 0o17]
}

function oflagText(v: number): string {
  const parts: string[] = []
  for (const [mask, names] of ODELAYS) {
    const shift = Math.log2(mask & -mask)
    parts.push(names[(v & mask) >>> shift])
    v &= ~mask
  }
  return `${parts.join('|')}|${flags(OFLAGS, v >>> 0)}`
}

function cflagText(v: number): string {
  const CBAUD = 0o10017
  const CIBAUD = 0o2003600000
  let text = `${baud(v & CBAUD)}|`
  if (v & CIBAUD) text += `${baud((v & CIBAUD) >>> 16)}<<IBSHIFT|`
  text += `CS${5 + ((v & 0o60) >>> 4)}|`
  return text + flags(CFLAGS, (v & ~(CBAUD | CIBAUD | 0o60)) >>> 0)
}

function termiosAt(mem: StraceMemory, addr: number): string {
  const s = readStruct(mem, addr, 36)
  if (!s) return hex(addr)
  return `{c_iflag=${flags(IFLAGS, s.u32(0))}, c_oflag=${oflagText(s.u32(4))}, c_cflag=${cflagText(s.u32(8))}, c_lflag=${flags(LFLAGS, s.u32(12))}, ...}`
}

function winsizeAt(mem: StraceMemory, addr: number): string {
  const s = readStruct(mem, addr, 8)
  if (!s) return hex(addr)
  return `{ws_row=${s.u16(0)}, ws_col=${s.u16(2)}, ws_xpixel=${s.u16(4)}, ws_ypixel=${s.u16(6)}}`
}

function intAt(mem: StraceMemory, addr: number): string {
  const s = readStruct(mem, addr, 4)
  return s ? `[${s.i32(0)}]` : hex(addr)
}

/**
 * How the third argument is shown: 'none' (no argument), 'entry' (known on
 * entry), 'exit' (an output, shown once the call returns; its address if the
 * call failed), with the printer for it.
 */
export type IoctlArg =
  | { when: 'none' }
  | { when: 'entry' | 'exit'; print: (mem: StraceMemory, arg: number) => string }

const ptrOrNull = (print: (mem: StraceMemory, addr: number) => string) => (mem: StraceMemory, addr: number) =>
  addr === 0 ? 'NULL' : print(mem, addr)

export function ioctlArg(cmd: number): IoctlArg {
  switch (uint32(cmd)) {
    case 0x5401: // TCGETS
      return { when: 'exit', print: ptrOrNull(termiosAt) }
    case 0x5402: // TCSETS, TCSETSW, TCSETSF
    case 0x5403:
    case 0x5404:
      return { when: 'entry', print: ptrOrNull(termiosAt) }
    case 0x5413: // TIOCGWINSZ
      return { when: 'exit', print: ptrOrNull(winsizeAt) }
    case 0x5414: // TIOCSWINSZ
      return { when: 'entry', print: ptrOrNull(winsizeAt) }
    case 0x540f: // TIOCGPGRP, TIOCGSID, FIONREAD, TIOCOUTQ, TIOCGETD, TIOCGPTN
    case 0x5429:
    case 0x541b:
    case 0x5411:
    case 0x5424:
    case 0x80045430:
      return { when: 'exit', print: ptrOrNull(intAt) }
    case 0x5410: // TIOCSPGRP, FIONBIO, FIOASYNC, TIOCSETD, TIOCPKT, TIOCSPTLCK
    case 0x5421:
    case 0x5452:
    case 0x5423:
    case 0x5420:
    case 0x40045431:
      return { when: 'entry', print: ptrOrNull(intAt) }
    case 0x540e: // TIOCSCTTY, TCSBRK, TCSBRKP: an int by value
    case 0x5409:
    case 0x5425:
      return { when: 'entry', print: (_mem, arg) => String(int32(arg)) }
    case 0x540a: // TCXONC
      return { when: 'entry', print: (_mem, arg) => xval(TCXONC, arg, 'TC???') }
    case 0x540b: // TCFLSH
      return { when: 'entry', print: (_mem, arg) => xval(TCFLSH, arg, 'TC???') }
    case 0x5450: // FIONCLEX, FIOCLEX, TIOCNOTTY, TIOCEXCL, TIOCNXCL, TIOCSBRK, TIOCCBRK, TIOCCONS
    case 0x5451:
    case 0x5422:
    case 0x540c:
    case 0x540d:
    case 0x5427:
    case 0x5428:
    case 0x541d:
      return { when: 'none' }
    default:
      // Not decoded: the raw argument, as strace does for requests it does not know.
      return { when: 'entry', print: (_mem, arg) => hex(arg) }
  }
}

const TCXONC: Xlat = [
  [0, 'TCOOFF'],
  [1, 'TCOON'],
  [2, 'TCIOFF'],
  [3, 'TCION'],
]
const TCFLSH: Xlat = [
  [0, 'TCIFLUSH'],
  [1, 'TCOFLUSH'],
  [2, 'TCIOFLUSH'],
]
