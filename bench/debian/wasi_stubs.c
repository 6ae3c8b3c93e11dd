/*
 * Functions the Debian programs reference that wasi-libc does not have.
 * None of them is reached on the suite's inputs (standard input to
 * standard output, no temporary files, no shell), so each fails the way
 * its manual page allows and the program takes its error path.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/types.h>

int fchmod(int fd, mode_t mode) {
	(void)fd, (void)mode;
	errno = ENOSYS;
	return -1;
}

int fchown(int fd, uid_t owner, gid_t group) {
	(void)fd, (void)owner, (void)group;
	errno = ENOSYS;
	return -1;
}

int system(const char *command) {
	/* No shell: system(NULL) says so, any command fails. */
	(void)command;
	return command == NULL ? 0 : -1;
}

FILE *tmpfile(void) {
	errno = ENOSYS;
	return NULL;
}

char *tmpnam(char *s) {
	(void)s;
	errno = ENOSYS;
	return NULL;
}
