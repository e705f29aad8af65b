// SPDX-License-Identifier: MIT
/*
 * Pipes (fs/pipe.c). The pipe's buffer is the host's; pipe_read and
 * pipe_write do the layer's work in the guest: copy to and from user memory
 * through this CPU's bounce buffer, one chunk at a time, and sleep on the
 * pipe (wait_event_host) while it is empty (for a reader with nothing read
 * yet) or full (for a writer), as Linux's do on pipe->rd_wait / wr_wait. A
 * signal ends the sleep with -ERESTARTSYS; data already moved is returned.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <asm/uaccess.h>

ssize_t host_file_read(unsigned long file, char *kbuf, size_t count, loff_t pos);
ssize_t host_file_write(unsigned long file, const char *kbuf, size_t count, loff_t pos);

/*
 * pipe_read(filp, buf, count, ppos): the classic (pre-iov_iter) signature,
 * so count is the second-to-last argument tools fetch ($arg3).
 */
noinline ssize_t pipe_read(struct file *filp, char __user *buf, size_t count, loff_t *ppos)
{
	ssize_t done = 0, ret = 0;

	(void)ppos;
	while ((size_t)done < count) {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		/* After a sleep this task may be on another CPU: take that CPU's buffer, each time. */
		char *kbuf = rw_bounce_buffer();
		ssize_t n = host_file_read(filp->f_host, kbuf, chunk, -1);

		if (n == -EWOULDSLEEP) {
			if (done)	/* an empty pipe after some data: return what we have */
				break;
			ret = wait_event_host(TASK_INTERRUPTIBLE);
			if (ret)
				break;
			continue;
		}
		if (n < 0) {
			ret = n;
			break;
		}
		if ((size_t)n > chunk)
			n = chunk;
		if (copy_to_user(buf + done, kbuf, n)) {
			ret = -EFAULT;
			break;
		}
		done += n;
		if ((size_t)n < chunk)	/* all the pipe had, or end of file */
			break;
	}
	return done ? done : ret;
}

noinline ssize_t pipe_write(struct file *filp, const char __user *buf, size_t count, loff_t *ppos)
{
	ssize_t done = 0, ret = 0;

	(void)ppos;
	while ((size_t)done < count) {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		char *kbuf = rw_bounce_buffer();
		ssize_t n;

		if (copy_from_user(kbuf, buf + done, chunk)) {
			ret = -EFAULT;
			break;
		}
		n = host_file_write(filp->f_host, kbuf, chunk, -1);
		if (n == -EWOULDSLEEP) {
			/* Full: wait for room (the chunk is copied again after the sleep). */
			ret = wait_event_host(TASK_INTERRUPTIBLE);
			if (ret)
				break;
			continue;
		}
		if (n < 0) {
			ret = n;
			break;
		}
		done += n;
	}
	return done ? done : ret;
}

const struct file_operations pipefifo_fops = {
	.read = pipe_read,
	.write = pipe_write,
};
