/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_ERRNO_H
#define _LINUX_ERRNO_H

#define EPERM		1
#define ENOENT		2
#define EINTR		4
#define EIO		5
#define E2BIG		7
#define EBADF		9
#define EAGAIN		11
#define ENOMEM		12
#define EFAULT		14
#define EINVAL		22
#define ENAMETOOLONG	36
#define ENOSYS		38
#define ESRCH		3
#define EOVERFLOW	75

/*
 * Kernel-internal: "restart this system call". A sleep cut short by a
 * signal returns one of these; on the way back to user mode the signal code
 * turns it into EINTR or rewinds the frame to the syscall instruction
 * (arch_do_signal_or_restart), as Linux does.
 */
#define ERESTARTSYS	512
#define ERESTARTNOINTR	513
#define ERESTARTNOHAND	514
#define ERESTART_RESTARTBLOCK 516

#define MAX_ERRNO	4095

#endif
