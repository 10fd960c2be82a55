// The kernel's floor for subscription fan-out on this machine: the least any server can do per update is one small
// TCP send per subscriber. This program does exactly that and nothing else (no HTTP, no WebSocket, no protocol), so
// its latency is what the loopback TCP stack alone allows.
//
//   fanout-floor sender SUBSCRIBERS PORT UPDATES RATE THREADS
//       accepts SUBSCRIBERS connections on 127.0.0.1:PORT, then sends UPDATES updates at RATE per second; each update
//       is one 70-byte send() to every subscriber, split over THREADS threads; prints ns per send.
//   fanout-floor reader SUBSCRIBERS PORT UPDATES
//       opens SUBSCRIBERS connections, reads every update with one epoll thread and prints the latency from each
//       update's due time to its arrival: p50, p99 and max. Waiting for a late round counts, as in `canopy bench`.
//
// Build: cc -O2 -pthread -o fanout-floor fanout-floor.c
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { UPDATE_BYTES = 70 };

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t deadline) {
    uint64_t now = monotonic_ns();
    if (now >= deadline) return;
    struct timespec t = {(time_t)((deadline - now) / 1000000000u), (long)((deadline - now) % 1000000000u)};
    nanosleep(&t, NULL);
}

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

struct slice {
    const int *sockets;
    int count;
    int updates;
    uint64_t start, interval;
    uint64_t busy_ns;
};

// Sends every update to this thread's slice of subscribers; each update carries its due time.
static void *send_slice(void *argument) {
    struct slice *slice = argument;
    char update[UPDATE_BYTES];
    memset(update, 'x', sizeof update);
    for (int round = 0; round < slice->updates; round++) {
        uint64_t due = slice->start + (uint64_t)round * slice->interval;
        sleep_until(due);
        memcpy(update, &due, sizeof due);
        uint64_t begun = monotonic_ns();
        for (int i = 0; i < slice->count; i++) {
            if (send(slice->sockets[i], update, sizeof update, MSG_NOSIGNAL) != (ssize_t)sizeof update) {
                perror("send");
                exit(1);
            }
        }
        slice->busy_ns += monotonic_ns() - begun;
    }
    return NULL;
}

static int run_sender(int subscribers, int port, int updates, int rate, int threads) {
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = loopback(port);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0) {
        perror("bind/listen");
        return 1;
    }
    int *sockets = calloc((size_t)subscribers, sizeof *sockets);
    for (int i = 0; i < subscribers; i++) {
        sockets[i] = accept(listener, NULL, NULL);
        if (sockets[i] < 0) { perror("accept"); return 1; }
        setsockopt(sockets[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    sleep(1);
    pthread_t workers[16];
    struct slice slices[16];
    if (threads < 1 || threads > 16) threads = 1;
    uint64_t start = monotonic_ns() + 100000000u, interval = 1000000000u / (uint64_t)rate;
    for (int t = 0; t < threads; t++) {
        int low = subscribers * t / threads, high = subscribers * (t + 1) / threads;
        slices[t] = (struct slice){sockets + low, high - low, updates, start, interval, 0};
        pthread_create(&workers[t], NULL, send_slice, &slices[t]);
    }
    uint64_t busy = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(workers[t], NULL);
        busy += slices[t].busy_ns;
    }
    printf("sender ns_per_send=%.0f fanout_ms=%.2f\n", (double)busy / ((double)updates * subscribers),
           (double)busy / threads / updates / 1e6);
    fflush(stdout);
    sleep(2);  // let the reader drain before the sockets close
    return 0;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_reader(int subscribers, int port, int updates) {
    int poller = epoll_create1(0);
    int *sockets = calloc((size_t)subscribers, sizeof *sockets);
    for (int i = 0; i < subscribers; i++) {
        sockets[i] = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in address = loopback(port);
        if (connect(sockets[i], (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 1; }
        fcntl(sockets[i], F_SETFL, O_NONBLOCK);
        struct epoll_event interest = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(poller, EPOLL_CTL_ADD, sockets[i], &interest);
    }
    size_t expected = (size_t)subscribers * (size_t)updates, received = 0;
    uint64_t *latencies = calloc(expected, sizeof *latencies);
    size_t *carried = calloc((size_t)subscribers, sizeof *carried);  // bytes of a partial update per socket
    char (*partial)[UPDATE_BYTES] = calloc((size_t)subscribers, UPDATE_BYTES);
    struct epoll_event events[512];
    char buffer[8192];
    while (received < expected) {
        int ready = epoll_wait(poller, events, 512, 10000);
        if (ready <= 0) {
            fprintf(stderr, "reader: no data for 10 s after %zu of %zu updates\n", received, expected);
            return 1;
        }
        for (int e = 0; e < ready; e++) {
            uint32_t i = events[e].data.u32;
            ssize_t length;
            while ((length = read(sockets[i], buffer, sizeof buffer)) > 0) {
                uint64_t arrival = monotonic_ns();
                for (ssize_t at = 0; at < length; at++) {
                    partial[i][carried[i]++] = buffer[at];
                    if (carried[i] < UPDATE_BYTES) continue;
                    uint64_t due;
                    memcpy(&due, partial[i], sizeof due);
                    if (received < expected) latencies[received++] = arrival - due;
                    carried[i] = 0;
                }
            }
        }
    }
    qsort(latencies, received, sizeof *latencies, compare_u64);
    printf("reader deliveries=%zu p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n", received, latencies[received / 2] / 1e6,
           latencies[received * 99 / 100] / 1e6, latencies[received - 1] / 1e6);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && strcmp(argv[1], "sender") == 0)
        return run_sender(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
    if (argc == 5 && strcmp(argv[1], "reader") == 0) return run_reader(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: %s sender SUBSCRIBERS PORT UPDATES RATE THREADS | reader SUBSCRIBERS PORT UPDATES\n",
            argv[0]);
    return 2;
}
