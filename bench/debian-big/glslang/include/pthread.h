/* The part of pthread.h that glslang's OSDependent/Unix layer uses, for
 * wasi-libc, which has no threads: one thread, so a key is a slot, a
 * mutex never waits, and pthread_once runs its routine the first time. */
#ifndef PATHPROF_WASI_PTHREAD_H
#define PATHPROF_WASI_PTHREAD_H

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned pthread_key_t;
typedef struct { int unused; } pthread_mutex_t;
typedef struct { int type; } pthread_mutexattr_t;
typedef int pthread_once_t;

#define PTHREAD_ONCE_INIT 0
#define PTHREAD_MUTEX_RECURSIVE 1

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int pthread_key_delete(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);
void *pthread_getspecific(pthread_key_t key);
int pthread_mutexattr_init(pthread_mutexattr_t *attr);
int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type);
int pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attr);
int pthread_mutex_lock(pthread_mutex_t *mutex);
int pthread_mutex_unlock(pthread_mutex_t *mutex);
int pthread_once(pthread_once_t *once, void (*routine)(void));

#ifdef __cplusplus
}
#endif
#endif
