// Linux errno values (asm-generic/errno-base.h, errno.h).

export const EPERM = 1
export const ENOENT = 2
export const ESRCH = 3
export const EINTR = 4
export const EIO = 5
export const ENXIO = 6
export const E2BIG = 7
export const ENOEXEC = 8
export const EBADF = 9
export const ECHILD = 10
export const EAGAIN = 11
export const ENOMEM = 12
export const EACCES = 13
export const EFAULT = 14
export const EBUSY = 16
export const EEXIST = 17
export const EXDEV = 18
export const ENODEV = 19
export const ENOTDIR = 20
export const EISDIR = 21
export const EINVAL = 22
export const ENFILE = 23
export const EMFILE = 24
export const ENOTTY = 25
export const EFBIG = 27
export const ENOSPC = 28
export const ESPIPE = 29
export const EROFS = 30
export const EMLINK = 31
export const EPIPE = 32
export const ERANGE = 34
export const ENAMETOOLONG = 36
export const ENOSYS = 38
export const ENOTEMPTY = 39
export const ELOOP = 40
export const ENOTSOCK = 88
export const EPROTONOSUPPORT = 93
export const EOPNOTSUPP = 95
export const EAFNOSUPPORT = 97
export const ENOTCONN = 107
export const ETIMEDOUT = 110
export const ECONNREFUSED = 111
export const EALREADY = 114
export const EINPROGRESS = 115

// Kernel-internal restart codes: a sleep a signal cut short returns one; the
// signal code turns it into EINTR or restarts the call (arch_do_signal_or_restart).
export const ERESTARTSYS = 512
export const ERESTARTNOINTR = 513
export const ERESTARTNOHAND = 514
export const ERESTART_RESTARTBLOCK = 516
