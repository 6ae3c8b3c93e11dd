// The standalone build's sbrk calls this import after growing the memory,
// to tell JavaScript; under a WASI runtime nobody needs telling.
#include <stddef.h>

void emscripten_notify_memory_growth(size_t memory_index) {
	(void)memory_index;
}
