// Canopy's `strdup`, which the process's shared libraries bind to instead of libc's: the same copy for a string,
// and NULL (an allocation failure to the caller) for NULL, where libc's reads address 0. nats.c 3.4.1's
// `js_Subscribe` calls `strdup` on the consumer name of an answer that may have none (docs/reliability.md, "The
// crash in `strdup`"); with this it reports NATS_NO_MEMORY, and Canopy makes another consumer.
//
// <string.h> is not included: its declaration marks the argument non-null, which would let the compiler drop the
// check below.
#include <stddef.h>

#include "CNatsGuard.h"

extern void *malloc(size_t size);
extern size_t strlen(const char *text);
extern void *memcpy(void *destination, const void *source, size_t count);

char *strdup(const char *text) {
    if (text == NULL) return NULL;
    size_t size = strlen(text) + 1;
    char *copy = malloc(size);
    if (copy != NULL) memcpy(copy, text, size);
    return copy;
}

int canopy_strdup_guard_installed(void) {
    char *copy = strdup(NULL);
    return copy == NULL;
}
