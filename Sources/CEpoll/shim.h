// Linux interfaces the Glibc module does not export to Swift: <sys/epoll.h>, <sys/eventfd.h>, the allocator's
// figures (<malloc.h>'s mallinfo2), and naming the calling thread (prctl is variadic, so Swift cannot call it
// directly). Headers only, nothing to link.
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/// The allocator's figures over every arena (Swift would take `mallinfo2()` for the struct's initializer).
static inline struct mallinfo2 canopy_heap_figures(void) {
    return mallinfo2();
}

/// Names the calling thread (at most 15 bytes show) for `ps -L`, `top -H` and debuggers.
static inline void canopy_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
