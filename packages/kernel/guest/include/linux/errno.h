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
#define EOVERFLOW	75

/*
 * Kernel-internal: "restart this system call". A host service that would
 * have to wait returns -ERESTARTNOINTR; the guest then rewinds the frame to
 * the syscall instruction and reschedules (see syscall_exit_to_user_mode).
 */
#define ERESTARTSYS	512
#define ERESTARTNOINTR	513
#define ERESTARTNOHAND	514

#define MAX_ERRNO	4095

#endif
