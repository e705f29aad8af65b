// SPDX-License-Identifier: MIT
/*
 * read and write. Data crosses between user memory and the host through a
 * per-CPU kernel bounce buffer: copy_from_user/copy_to_user do the user
 * side (and turn bad pointers into -EFAULT), the host the file side.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/wait.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>
#include <asm/uaccess.h>

static char bounce_buffers[NR_CPUS][BOUNCE_SIZE] __aligned(PAGE_SIZE);

char *rw_bounce_buffer(void)
{
	return bounce_buffers[smp_processor_id()];
}

/*
 * Leaves: the host's file operations. pos: the offset to use, or -1 for the
 * file position. A pipe (or terminal) with nothing to read, or no room to
 * write, says -EWOULDSLEEP and the caller sleeps until it has (the host
 * tells which: pipe_read and pipe_write wait on their pipe's queues).
 */
noinline ssize_t host_file_read(unsigned int fd, char *kbuf, size_t count, loff_t pos)
{
	return hypercall4(HC_FILE_READ, fd, kbuf, count, pos);
}

noinline ssize_t host_file_write(unsigned int fd, const char *kbuf, size_t count, loff_t pos)
{
	return hypercall4(HC_FILE_WRITE, fd, kbuf, count, pos);
}

static ssize_t file_read_wait(unsigned int fd, char *kbuf, size_t count, loff_t pos)
{
	return wait_event_host_call(host_file_read(fd, kbuf, count, pos), TASK_INTERRUPTIBLE);
}

static ssize_t file_write_wait(unsigned int fd, const char *kbuf, size_t count, loff_t pos)
{
	return wait_event_host_call(host_file_write(fd, kbuf, count, pos), TASK_INTERRUPTIBLE);
}

noinline int rw_verify_area(int read_write, unsigned int fd, const loff_t *ppos, size_t count)
{
	(void)read_write;
	(void)fd;
	if (unlikely((ssize_t)count < 0))
		return -EINVAL;
	if (ppos && *ppos < 0)
		return -EINVAL;
	return 0;
}

noinline ssize_t vfs_read(unsigned int fd, char __user *buf, size_t count, loff_t *pos)
{
	char *kbuf = rw_bounce_buffer();
	ssize_t done = 0, ret;

	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;
	ret = rw_verify_area(READ, fd, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;

	/* At least one call even for count 0, so that a bad fd still says -EBADF. */
	do {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		ssize_t n = file_read_wait(fd, kbuf, chunk, pos ? *pos : -1);

		if (n < 0) {
			ret = n;
			break;
		}
		if ((size_t)n > chunk)	/* never trust a length from outside */
			n = chunk;
		if (copy_to_user(buf + done, kbuf, n)) {
			ret = -EFAULT;
			break;
		}
		done += n;
		if (pos)
			*pos += n;
		if ((size_t)n < chunk)	/* short read: end of file, or all a pipe had */
			break;
	} while ((size_t)done < count);

	return done ? done : ret;
}

noinline ssize_t vfs_write(unsigned int fd, const char __user *buf, size_t count, loff_t *pos)
{
	char *kbuf = rw_bounce_buffer();
	ssize_t done = 0, ret;

	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;
	ret = rw_verify_area(WRITE, fd, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;

	do {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		ssize_t n;

		if (copy_from_user(kbuf, buf + done, chunk)) {
			ret = -EFAULT;	/* a bad page: -EFAULT if nothing was written yet */
			break;
		}
		n = file_write_wait(fd, kbuf, chunk, pos ? *pos : -1);
		if (n < 0) {
			ret = n;
			break;
		}
		done += n;
		if (pos)
			*pos += n;
		if ((size_t)n < chunk)
			break;
	} while ((size_t)done < count);

	return done ? done : ret;
}

noinline ssize_t ksys_read(unsigned int fd, char __user *buf, size_t count)
{
	return vfs_read(fd, buf, count, NULL);
}

noinline ssize_t ksys_write(unsigned int fd, const char __user *buf, size_t count)
{
	return vfs_write(fd, buf, count, NULL);
}

noinline long sys_read(unsigned int fd, char __user *buf, size_t count)
{
	return ksys_read(fd, buf, count);
}

noinline long sys_write(unsigned int fd, const char __user *buf, size_t count)
{
	return ksys_write(fd, buf, count);
}
