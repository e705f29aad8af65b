// errno names and messages as glibc's strerror and strace print them
// (asm-generic/errno-base.h and errno.h's first block, the ones the kernel
// returns here).

const NAMES: Record<number, [string, string]> = {
  1: ['EPERM', 'Operation not permitted'],
  2: ['ENOENT', 'No such file or directory'],
  3: ['ESRCH', 'No such process'],
  4: ['EINTR', 'Interrupted system call'],
  5: ['EIO', 'Input/output error'],
  6: ['ENXIO', 'No such device or address'],
  7: ['E2BIG', 'Argument list too long'],
  8: ['ENOEXEC', 'Exec format error'],
  9: ['EBADF', 'Bad file descriptor'],
  10: ['ECHILD', 'No child processes'],
  11: ['EAGAIN', 'Resource temporarily unavailable'],
  12: ['ENOMEM', 'Cannot allocate memory'],
  13: ['EACCES', 'Permission denied'],
  14: ['EFAULT', 'Bad address'],
  16: ['EBUSY', 'Device or resource busy'],
  17: ['EEXIST', 'File exists'],
  18: ['EXDEV', 'Invalid cross-device link'],
  19: ['ENODEV', 'No such device'],
  20: ['ENOTDIR', 'Not a directory'],
  21: ['EISDIR', 'Is a directory'],
  22: ['EINVAL', 'Invalid argument'],
  23: ['ENFILE', 'Too many open files in system'],
  24: ['EMFILE', 'Too many open files'],
  25: ['ENOTTY', 'Inappropriate ioctl for device'],
  27: ['EFBIG', 'File too large'],
  28: ['ENOSPC', 'No space left on device'],
  29: ['ESPIPE', 'Illegal seek'],
  30: ['EROFS', 'Read-only file system'],
  31: ['EMLINK', 'Too many links'],
  32: ['EPIPE', 'Broken pipe'],
  33: ['EDOM', 'Numerical argument out of domain'],
  34: ['ERANGE', 'Numerical result out of range'],
  35: ['EDEADLK', 'Resource deadlock avoided'],
  36: ['ENAMETOOLONG', 'File name too long'],
  38: ['ENOSYS', 'Function not implemented'],
  39: ['ENOTEMPTY', 'Directory not empty'],
  40: ['ELOOP', 'Too many levels of symbolic links'],
  61: ['ENODATA', 'No data available'],
  75: ['EOVERFLOW', 'Value too large for defined data type'],
  88: ['ENOTSOCK', 'Socket operation on non-socket'],
  93: ['EPROTONOSUPPORT', 'Protocol not supported'],
  95: ['EOPNOTSUPP', 'Operation not supported'],
  97: ['EAFNOSUPPORT', 'Address family not supported by protocol'],
  107: ['ENOTCONN', 'Transport endpoint is not connected'],
  110: ['ETIMEDOUT', 'Connection timed out'],
  111: ['ECONNREFUSED', 'Connection refused'],
}

/** ENOENT for 2 (a negative errno works too); `E<n>` for one not listed. */
export function errnoName(errno: number): string {
  return NAMES[Math.abs(errno)]?.[0] ?? `E${Math.abs(errno)}`
}

/** strerror's message: "No such file or directory". */
export function errnoMessage(errno: number): string {
  return NAMES[Math.abs(errno)]?.[1] ?? `Unknown error ${Math.abs(errno)}`
}
