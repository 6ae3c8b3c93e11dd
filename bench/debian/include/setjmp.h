/*
 * wasi-libc has no setjmp.h (WebAssembly had no way to unwind the stack
 * when it was written). Lua includes it unconditionally; the build defines
 * LUAI_THROW and LUAI_TRY without it, so nothing here is ever used.
 */
#ifndef PATHPROF_SETJMP_H
#define PATHPROF_SETJMP_H
typedef int jmp_buf[1];
#endif
