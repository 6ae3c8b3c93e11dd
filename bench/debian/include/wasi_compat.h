/*
 * Declarations of what wasi_stubs.c defines, for sources that expect them
 * from the POSIX headers wasi-libc leaves them out of.
 */
#include <stdio.h>
#include <sys/types.h>
int fchmod(int fd, mode_t mode);
int fchown(int fd, uid_t owner, gid_t group);
/* Lua sizes a buffer for tmpnam with it; wasi_stubs.c's tmpnam fails. */
#ifndef L_tmpnam
#define L_tmpnam 20
#endif
