// The Glibc module does not export <sys/epoll.h>; this system-library shim does (headers only, nothing to link).
#include <sys/epoll.h>
