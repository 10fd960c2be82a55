/*
 * A wall clock that a test can move: preloaded (LD_PRELOAD) into a Canopy node by clock_jumps.py.
 *
 * CLOCK_REALTIME (and CLOCK_REALTIME_COARSE, gettimeofday, time) reads the real clock plus an offset in whole
 * milliseconds, written as decimal text to the file named by CANOPY_CLOCK_OFFSET_FILE (a missing or unreadable
 * file means 0). The file is read again at most every 100 ms, so a change takes effect within that, and a clock
 * read costs one coarse monotonic read and an atomic load on top of the real one. Every other clock, monotonic and
 * boot time among them, is untouched: that is what a step of the wall clock (an NTP step, an operator's `date -s`,
 * a VM restored from a snapshot) does to a machine.
 *
 * Waits with an absolute deadline on the wall clock (pthread_cond_timedwait on a condition variable of
 * CLOCK_REALTIME, pthread_cond_clockwait with CLOCK_REALTIME) get their deadline moved back by the offset in force
 * when they start, so that a deadline computed from the moved clock means what it would on a machine whose clock
 * moved. A wait already under way when the offset changes is not moved; on a real machine it would end early (a
 * forward step) or late (a backward one).
 *
 * libfaketime is not used: Debian's 0.9.10 with FAKETIME_DONT_FAKE_MONOTONIC=1 shifts absolute waits on the
 * monotonic clock by the offset (timerfd: Dispatch's timers stop; condition variables of CLOCK_MONOTONIC time out at
 * once) and fails clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) with EINVAL, and its constructor's setenv leaves
 * a Swift program's CommandLine.arguments empty. See docs/reliability.md.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NANOS_PER_SECOND 1000000000LL
#define REREAD_NANOS (100LL * 1000000LL)

typedef int (*clock_gettime_function)(clockid_t, struct timespec *);
typedef int (*cond_timedwait_function)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_function)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);

static clock_gettime_function real_clock_gettime;
static cond_timedwait_function real_cond_timedwait;
static cond_clockwait_function real_cond_clockwait;
static const char *offset_file;
static _Atomic int64_t offset_nanos;
static _Atomic int64_t next_read_nanos;

__attribute__((constructor)) static void resolve(void) {
    real_clock_gettime = (clock_gettime_function)dlsym(RTLD_NEXT, "clock_gettime");
    real_cond_timedwait = (cond_timedwait_function)dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (real_cond_timedwait == NULL)
        real_cond_timedwait = (cond_timedwait_function)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
    real_cond_clockwait = (cond_clockwait_function)dlsym(RTLD_NEXT, "pthread_cond_clockwait");
    offset_file = getenv("CANOPY_CLOCK_OFFSET_FILE");
}

static int64_t nanos(const struct timespec *value) { return (int64_t)value->tv_sec * NANOS_PER_SECOND + value->tv_nsec; }

static struct timespec timespec_of(int64_t value) {
    struct timespec result = {value / NANOS_PER_SECOND, value % NANOS_PER_SECOND};
    if (result.tv_nsec < 0) {
        result.tv_sec -= 1;
        result.tv_nsec += NANOS_PER_SECOND;
    }
    return result;
}

/* The offset in milliseconds from the file, or 0. */
static int64_t read_offset_nanos(void) {
    char text[32];
    int descriptor = open(offset_file, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return 0;
    ssize_t count = read(descriptor, text, sizeof text - 1);
    close(descriptor);
    if (count <= 0) return 0;
    text[count] = 0;
    char *end;
    long long milliseconds = strtoll(text, &end, 10);
    if (end == text || milliseconds > 100LL * 365 * 86400 * 1000 || milliseconds < -100LL * 365 * 86400 * 1000)
        return 0;
    return milliseconds * 1000000LL;
}

/* The offset in force: read again once the previous read is REREAD_NANOS old, by one thread at a time. */
static int64_t current_offset(void) {
    if (offset_file == NULL || real_clock_gettime == NULL) return 0;
    struct timespec now;
    real_clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    int64_t due = atomic_load_explicit(&next_read_nanos, memory_order_relaxed);
    if (nanos(&now) >= due &&
        atomic_compare_exchange_strong(&next_read_nanos, &due, nanos(&now) + REREAD_NANOS)) {
        int saved = errno;
        atomic_store_explicit(&offset_nanos, read_offset_nanos(), memory_order_relaxed);
        errno = saved;
    }
    return atomic_load_explicit(&offset_nanos, memory_order_relaxed);
}

int clock_gettime(clockid_t clock, struct timespec *reading) {
    if (real_clock_gettime == NULL) {
        errno = ENOSYS;
        return -1;
    }
    int result = real_clock_gettime(clock, reading);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
        *reading = timespec_of(nanos(reading) + current_offset());
    return result;
}

int gettimeofday(struct timeval *restrict reading, void *restrict zone) {
    (void)zone;
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
    reading->tv_sec = now.tv_sec;
    reading->tv_usec = now.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *result) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return (time_t)-1;
    if (result != NULL) *result = now.tv_sec;
    return now.tv_sec;
}

/* glibc (2.25 and later) keeps a condition variable's clock in bit 1 of __wrefs: 0 CLOCK_REALTIME, 1 MONOTONIC. */
static int waits_on_wall_clock(const pthread_cond_t *condition) { return ((condition->__data.__wrefs >> 1) & 1) == 0; }

int pthread_cond_timedwait(pthread_cond_t *restrict condition, pthread_mutex_t *restrict mutex,
                           const struct timespec *restrict deadline) {
    if (!waits_on_wall_clock(condition)) return real_cond_timedwait(condition, mutex, deadline);
    struct timespec moved = timespec_of(nanos(deadline) - current_offset());
    return real_cond_timedwait(condition, mutex, &moved);
}

int pthread_cond_clockwait(pthread_cond_t *restrict condition, pthread_mutex_t *restrict mutex, clockid_t clock,
                           const struct timespec *restrict deadline) {
    if (real_cond_clockwait == NULL) return EINVAL;
    if (clock != CLOCK_REALTIME) return real_cond_clockwait(condition, mutex, clock, deadline);
    struct timespec moved = timespec_of(nanos(deadline) - current_offset());
    return real_cond_clockwait(condition, mutex, clock, &moved);
}
