/* Single-threaded pthread keys, mutexes and once for glslang under
 * wasi-libc, which has no threads (include/pthread.h). */
#include <errno.h>
#include <pthread.h>

#define KEYS 64
static void *slots[KEYS];
static unsigned char used[KEYS];

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *)) {
	(void)destructor;
	for (unsigned i = 0; i < KEYS; i++)
		if (!used[i]) {
			used[i] = 1;
			slots[i] = 0;
			*key = i;
			return 0;
		}
	return EAGAIN;
}
int pthread_key_delete(pthread_key_t key) {
	if (key >= KEYS || !used[key])
		return EINVAL;
	used[key] = 0;
	return 0;
}
int pthread_setspecific(pthread_key_t key, const void *value) {
	if (key >= KEYS || !used[key])
		return EINVAL;
	slots[key] = (void *)value;
	return 0;
}
void *pthread_getspecific(pthread_key_t key) {
	return key < KEYS ? slots[key] : 0;
}
int pthread_mutexattr_init(pthread_mutexattr_t *a) { a->type = 0; return 0; }
int pthread_mutexattr_settype(pthread_mutexattr_t *a, int t) { a->type = t; return 0; }
int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a) { (void)m; (void)a; return 0; }
int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
int pthread_once(pthread_once_t *once, void (*routine)(void)) {
	if (!*once) {
		*once = 1;
		routine();
	}
	return 0;
}

