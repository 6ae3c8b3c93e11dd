/* lsdir: lists a directory for the tests of P3's copies of writable
 * mounts. "lsdir DIR" prints each entry of DIR, sorted by name, with its
 * kind and size, and for a symbolic link its target, so that copies that
 * see a different directory print differently. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
	const char *dir = argc > 1 ? argv[1] : ".";
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		return 1;
	}
	char *names[1024];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], cmp);
	for (int i = 0; i < n; i++) {
		char path[4096], target[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (lstat(path, &st) != 0) {
			perror(path);
			return 1;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t m = readlink(path, target, sizeof target - 1);
			if (m < 0) {
				perror(path);
				return 1;
			}
			target[m] = 0;
			printf("%s link -> %s\n", names[i], target);
		} else if (S_ISDIR(st.st_mode)) {
			printf("%s dir\n", names[i]);
		} else {
			printf("%s file %lld bytes\n", names[i], (long long)st.st_size);
		}
	}
	return 0;
}
