/*
 * maxrss: run a program and print its peak resident set (getrusage
 * ru_maxrss of the child, KiB) on stderr. A static launcher, because Linux
 * carries the pre-exec image's high-water mark into the child's ru_maxrss:
 * spawned from Node or Python the figure would be the parent's size.
 * Built by the benchmark at run time (musl-gcc or gcc -static).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: maxrss program [args...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0)
		return 1;
	fprintf(stderr, "%ld\n", ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
