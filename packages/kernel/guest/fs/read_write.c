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
 * Leaves: the host's file operations on an open file (file->f_host). pos:
 * the offset to use, or -1 for the file position. A pipe with nothing to
 * read or no room to write says -EWOULDSLEEP: pipe_read and pipe_write
 * (fs/pipe.c) then sleep until it has.
 */
noinline ssize_t host_file_read(unsigned long file, char *kbuf, size_t count, loff_t pos)
{
	return hypercall4(HC_FILE_READ, file, kbuf, count, pos);
}

noinline ssize_t host_file_write(unsigned long file, const char *kbuf, size_t count, loff_t pos)
{
	return hypercall4(HC_FILE_WRITE, file, kbuf, count, pos);
}

/*
 * Leaf: the guest face of current's descriptor fd (made on first use), or
 * 0; FDPUT_FPUT in the low bit when the descriptor table is shared (another
 * thread could close fd meanwhile), so the host took a reference.
 */
noinline unsigned long __fdget(unsigned int fd)
{
	return hypercall1(HC_FDGET, fd);
}

/* Leaf: drop the reference __fdget took. */
noinline void fput(struct file *file)
{
	hypercall1(HC_FPUT, file);
}

/* fdget: the open file behind a descriptor, its f_op chosen by what the host says it is. */
noinline struct fd fdget(unsigned int fd)
{
	unsigned long v = __fdget(fd);
	struct fd f = { (struct file *)(v & ~3UL), (unsigned int)(v & 3) };

	if (f.file && !f.file->f_op)
		f.file->f_op = f.file->f_kind == FILE_KIND_PIPE ? &pipefifo_fops : &host_file_fops;
	return f;
}

noinline void fdput(struct fd f)
{
	if (f.flags & FDPUT_FPUT)
		fput(f.file);
}

noinline int rw_verify_area(int read_write, struct file *file, const loff_t *ppos, size_t count)
{
	(void)read_write;
	(void)file;
	if (unlikely((ssize_t)count < 0))
		return -EINVAL;
	if (ppos && *ppos < 0)
		return -EINVAL;
	return 0;
}

/* A file the host reads and writes whole (regular files, devices): chunk by chunk through the bounce buffer. */
static noinline ssize_t host_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
{
	ssize_t done = 0, ret = 0;

	/* At least one call even for count 0, so that the host still checks the file. */
	do {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		char *kbuf = rw_bounce_buffer();
		ssize_t n = host_file_read(file->f_host, kbuf, chunk, pos ? *pos : -1);

		if (n == -EWOULDSLEEP) {	/* a terminal with nothing typed yet */
			if (done)
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
		if ((size_t)n > chunk)	/* never trust a length from outside */
			n = chunk;
		if (copy_to_user(buf + done, kbuf, n)) {
			ret = -EFAULT;
			break;
		}
		done += n;
		if (pos)
			*pos += n;
		if ((size_t)n < chunk)	/* short read: end of file */
			break;
	} while ((size_t)done < count);

	return done ? done : ret;
}

static noinline ssize_t host_write(struct file *file, const char __user *buf, size_t count, loff_t *pos)
{
	ssize_t done = 0, ret = 0;

	do {
		size_t chunk = min(count - done, (size_t)BOUNCE_SIZE);
		char *kbuf = rw_bounce_buffer();
		ssize_t n;

		if (copy_from_user(kbuf, buf + done, chunk)) {
			ret = -EFAULT;	/* a bad page: -EFAULT if nothing was written yet */
			break;
		}
		n = host_file_write(file->f_host, kbuf, chunk, pos ? *pos : -1);
		if (n == -EWOULDSLEEP) {
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
		if (pos)
			*pos += n;
		if ((size_t)n < chunk)
			break;
	} while ((size_t)done < count);

	return done ? done : ret;
}

const struct file_operations host_file_fops = {
	.read = host_read,
	.write = host_write,
};

noinline ssize_t vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;
	ret = rw_verify_area(READ, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	return file->f_op->read(file, buf, count, pos);
}

noinline ssize_t vfs_write(struct file *file, const char __user *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;
	ret = rw_verify_area(WRITE, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	return file->f_op->write(file, buf, count, pos);
}

noinline ssize_t ksys_read(unsigned int fd, char __user *buf, size_t count)
{
	struct fd f = fdget(fd);
	ssize_t ret;

	if (!f.file)
		return -EBADF;
	ret = vfs_read(f.file, buf, count, NULL);
	fdput(f);
	return ret;
}

noinline ssize_t ksys_write(unsigned int fd, const char __user *buf, size_t count)
{
	struct fd f = fdget(fd);
	ssize_t ret;

	if (!f.file)
		return -EBADF;
	ret = vfs_write(f.file, buf, count, NULL);
	fdput(f);
	return ret;
}

noinline long sys_read(unsigned int fd, char __user *buf, size_t count)
{
	return ksys_read(fd, buf, count);
}

noinline long sys_write(unsigned int fd, const char __user *buf, size_t count)
{
	return ksys_write(fd, buf, count);
}

/* fs/sync.c: the host's files are always in sync; vfs_fsync is the leaf that says so (or EINVAL, EBADF). */
noinline int vfs_fsync(struct file *file, int datasync)
{
	(void)file;
	(void)datasync;
	return (int)host_syscall(current_pt_regs());
}

static noinline long do_fsync(unsigned int fd, int datasync)
{
	struct fd f = fdget(fd);
	long ret;

	if (!f.file)
		return -EBADF;
	ret = vfs_fsync(f.file, datasync);
	fdput(f);
	return ret;
}

noinline long sys_fsync(unsigned int fd)
{
	return do_fsync(fd, 0);
}

noinline long sys_fdatasync(unsigned int fd)
{
	return do_fsync(fd, 1);
}
