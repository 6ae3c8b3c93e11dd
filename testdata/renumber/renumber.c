/* renumber: captures its own output as yowasp's yosys captures ABC's, by
 * renumbering a file's descriptor onto stdout, and says whether the host
 * let it. wazero refuses to renumber onto a standard stream (ENOTSUP), and
 * the node engine must refuse alike for the copies to take the same paths.
 * Run with a writable directory mounted at /out. Build (the .wasm is
 * committed):
 *
 *   clang-14 --target=wasm32-wasi --sysroot=/usr -O1 -g -Wall -Wextra -Werror \
 *       -fdebug-prefix-map=$PWD=. -o renumber.wasm renumber.c
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <wasi/api.h>

int main(void) {
	int fd = open("/out/captured.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("/out/captured.txt");
		return 2;
	}
	__wasi_errno_t err = __wasi_fd_renumber(fd, 1);
	if (err == 0) {
		/* stdout is the file now, and the program's own is gone. */
		fprintf(stderr, "renumbered onto stdout\n");
		return 3;
	}
	close(fd);
	int sum = 0;
	for (int i = 0; i < 100; i++) {
		sum += err == __WASI_ERRNO_NOTSUP ? i : -i;
	}
	printf("refused with %d, sum %d\n", err, sum);
	return 0;
}
