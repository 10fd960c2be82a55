// What one `writev` of many small frames costs the kernel on loopback TCP, against copying the frames into one buffer
// and writing that: the measurement behind the transport's gathering of small queued chunks (docs/benchmarks.md,
// "Small frames gathered into one buffer per writev").
//
//   iovec-cost FRAMES SIZE CALLS MODE
//       connects to itself over 127.0.0.1 (TCP_NODELAY; a second thread reads and discards), then makes CALLS sends
//       of FRAMES frames of SIZE bytes each: MODE 0 as one writev with one iovec per frame; copied into one buffer
//       and sent with write (MODE 1), send (MODE 2) or a writev of that one iovec (MODE 3). Prints the sending
//       thread's system and user CPU per call.
//
// Build: cc -O2 -pthread -o iovec-cost iovec-cost.c
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static void *discard(void *argument) {
    int fd = *(int *)argument;
    char buffer[65536];
    while (read(fd, buffer, sizeof buffer) > 0) {
    }
    return NULL;
}

static void thread_cpu(double *system, double *user) {
    struct rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    *system = usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    *user = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: iovec-cost FRAMES SIZE CALLS MODE(0 writev, 1 copy+write, 2 copy+send, "
                        "3 copy+writev of one iovec)\n");
        return 2;
    }
    int frames = atoi(argv[1]), size = atoi(argv[2]), calls = atoi(argv[3]), mode = atoi(argv[4]);
    if (frames < 1 || frames > 1024 || size < 1 || calls < 1 || mode < 0 || mode > 3) {
        fprintf(stderr, "FRAMES 1-1024, SIZE and CALLS at least 1, MODE 0-3\n");
        return 2;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
        perror("listen");
        return 1;
    }
    int sender = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(sender, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        return 1;
    }
    int receiver = accept(listener, NULL, NULL);
    int on = 1;
    setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    pthread_t reader;
    pthread_create(&reader, NULL, discard, &receiver);

    char *frame = malloc(size);
    char *flat = malloc((size_t)frames * size);
    struct iovec *iovecs = malloc(sizeof *iovecs * frames);
    memset(frame, 'x', size);
    for (int index = 0; index < frames; index++) iovecs[index] = (struct iovec){frame, (size_t)size};
    ssize_t total = (ssize_t)frames * size;

    static const char *const modes[] = {"writev", "copy + write", "copy + send", "copy + writev of one iovec"};
    double system0, user0, system1, user1;
    thread_cpu(&system0, &user0);
    for (int call = 0; call < calls; call++) {
        ssize_t sent;
        if (mode == 0) {
            sent = writev(sender, iovecs, frames);
        } else {
            for (int index = 0; index < frames; index++) memcpy(flat + (size_t)index * size, frame, size);
            struct iovec whole = {flat, (size_t)total};
            if (mode == 1) sent = write(sender, flat, total);
            else if (mode == 2) sent = send(sender, flat, total, MSG_NOSIGNAL);
            else sent = writev(sender, &whole, 1);
        }
        if (sent != total) {
            fprintf(stderr, "short send: %zd of %zd\n", sent, total);
            return 1;
        }
    }
    thread_cpu(&system1, &user1);
    printf("%s, %d frames of %d bytes: system %.2f us per call, user %.2f us per call\n",
           modes[mode], frames, size, (system1 - system0) * 1e6 / calls,
           (user1 - user0) * 1e6 / calls);
    shutdown(sender, SHUT_WR);
    pthread_join(reader, NULL);
    return 0;
}
