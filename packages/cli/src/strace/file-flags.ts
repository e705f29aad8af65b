// File-related constants in strace's table order (x86-64 values): open
// flags, *at flags, access modes, lseek whence, fcntl commands.

import { int32 } from './numbers.js'
import { flags, lookup, type Xlat } from './xlat.js'

const O_ACCMODE: Xlat = [
  [0, 'O_RDONLY'],
  [1, 'O_WRONLY'],
  [2, 'O_RDWR'],
  [3, 'O_ACCMODE'],
]

export const O_CREAT = 0o100
export const O_TMPFILE_BIT = 0o20000000

const OPEN_MODE_FLAGS: Xlat = [
  [O_CREAT, 'O_CREAT'],
  [0o200, 'O_EXCL'],
  [0o400, 'O_NOCTTY'],
  [0o1000, 'O_TRUNC'],
  [0o2000, 'O_APPEND'],
  [0o4000, 'O_NONBLOCK'],
  // O_SYNC is __O_SYNC|O_DSYNC: listed first so it wins over both.
  [0o4010000, 'O_SYNC'],
  [0o4000000, '__O_SYNC'],
  [0o10000, 'O_DSYNC'],
  [0o40000, 'O_DIRECT'],
  [0o100000, 'O_LARGEFILE'],
  [0o400000, 'O_NOFOLLOW'],
  [0o1000000, 'O_NOATIME'],
  [0o2000000, 'O_CLOEXEC'],
  [0o10000000, 'O_PATH'],
  [0o20200000, 'O_TMPFILE'],
  [O_TMPFILE_BIT, '__O_TMPFILE'],
  [0o200000, 'O_DIRECTORY'],
  [0o20000, 'FASYNC'],
]

/** open(2) flags: the access mode always, then the rest (tprint_open_modes). */
export function openFlags(value: number): string {
  const v = value >>> 0
  const access = lookup(O_ACCMODE, v & 3)!
  const rest = v & ~3
  return rest ? `${access}|${flags(OPEN_MODE_FLAGS, rest)}` : access
}

export const AT_FDCWD = -100

/** A directory fd argument: AT_FDCWD or the number. */
export function dirfd(value: number): string {
  const fd = int32(value)
  return fd === AT_FDCWD ? 'AT_FDCWD' : String(fd)
}

export const AT_FLAGS: Xlat = [
  [0x100, 'AT_SYMLINK_NOFOLLOW'],
  [0x200, 'AT_REMOVEDIR'],
  [0x400, 'AT_SYMLINK_FOLLOW'],
  [0x800, 'AT_NO_AUTOMOUNT'],
  [0x1000, 'AT_EMPTY_PATH'],
  [0x8000, 'AT_RECURSIVE'],
]

export const FACCESSAT_FLAGS: Xlat = [
  [0x100, 'AT_SYMLINK_NOFOLLOW'],
  [0x200, 'AT_EACCESS'],
  [0x1000, 'AT_EMPTY_PATH'],
]

export const ACCESS_MODES: Xlat = [
  [4, 'R_OK'],
  [2, 'W_OK'],
  [1, 'X_OK'],
  [0, 'F_OK'],
]

export const WHENCE: Xlat = [
  [0, 'SEEK_SET'],
  [1, 'SEEK_CUR'],
  [2, 'SEEK_END'],
  [3, 'SEEK_DATA'],
  [4, 'SEEK_HOLE'],
]

export const FD_FLAGS: Xlat = [[1, 'FD_CLOEXEC']]

export const PIPE_FLAGS: Xlat = [
  [0o4000, 'O_NONBLOCK'],
  [0o40000, 'O_DIRECT'],
  [0o2000000, 'O_CLOEXEC'],
]

export const DUP3_FLAGS: Xlat = [[0o2000000, 'O_CLOEXEC']]

export const F = {
  DUPFD: 0,
  GETFD: 1,
  SETFD: 2,
  GETFL: 3,
  SETFL: 4,
  GETLK: 5,
  SETLK: 6,
  SETLKW: 7,
  SETOWN: 8,
  GETOWN: 9,
  SETSIG: 10,
  GETSIG: 11,
  OFD_GETLK: 36,
  OFD_SETLK: 37,
  OFD_SETLKW: 38,
  GETLEASE: 1025,
  DUPFD_CLOEXEC: 1030,
  SETPIPE_SZ: 1031,
  GETPIPE_SZ: 1032,
  GET_SEALS: 1034,
} as const

export const FCNTL_CMDS: Xlat = [
  [0, 'F_DUPFD'],
  [1, 'F_GETFD'],
  [2, 'F_SETFD'],
  [3, 'F_GETFL'],
  [4, 'F_SETFL'],
  [5, 'F_GETLK'],
  [6, 'F_SETLK'],
  [7, 'F_SETLKW'],
  [8, 'F_SETOWN'],
  [9, 'F_GETOWN'],
  [10, 'F_SETSIG'],
  [11, 'F_GETSIG'],
  [15, 'F_SETOWN_EX'],
  [16, 'F_GETOWN_EX'],
  [17, 'F_GETOWNER_UIDS'],
  [36, 'F_OFD_GETLK'],
  [37, 'F_OFD_SETLK'],
  [38, 'F_OFD_SETLKW'],
  [1024, 'F_SETLEASE'],
  [1025, 'F_GETLEASE'],
  [1026, 'F_NOTIFY'],
  [1029, 'F_CANCELLK'],
  [1030, 'F_DUPFD_CLOEXEC'],
  [1031, 'F_SETPIPE_SZ'],
  [1032, 'F_GETPIPE_SZ'],
  [1033, 'F_ADD_SEALS'],
  [1034, 'F_GET_SEALS'],
]

export const LOCK_TYPES: Xlat = [
  [0, 'F_RDLCK'],
  [1, 'F_WRLCK'],
  [2, 'F_UNLCK'],
  [4, 'F_EXLCK'],
  [8, 'F_SHLCK'],
]
