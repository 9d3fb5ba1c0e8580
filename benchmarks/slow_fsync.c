/* A slow SD card's fsync, for benchmarks/sdcard.py: LD_PRELOAD this library and every
 * fsync() and fdatasync() of the process first sleeps a delay drawn log-uniformly from
 * [SLOW_FSYNC_MIN_MS, SLOW_FSYNC_MAX_MS] (default 20-200 ms), then does the real call.
 * Why those figures are in benchmarks/sdcard.py's docstring. Each call is appended to
 * SLOW_FSYNC_LOG (if set) as "<ms slept> <CLOCK_MONOTONIC s when it returned> <the
 * file's size when called> <its path>\n": what the run slept, and what was on the card
 * when (the hall's check that a move shown on the page was on the card).
 * Built by the benchmark with the machine's C compiler: cc -shared -fPIC -O2 ... -ldl -lm */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long state = 0x9E3779B97F4A7C15ull;

static double env_ms(const char *name, double fallback) {
    const char *text = getenv(name);
    return text && *text ? atof(text) : fallback;
}

static double next_uniform(void) {
    pthread_mutex_lock(&lock);
    if (state == 0x9E3779B97F4A7C15ull) {
        const char *seed = getenv("SLOW_FSYNC_SEED");
        state ^= seed ? strtoull(seed, NULL, 10) * 0x100000001B3ull : (unsigned long long)getpid();
    }
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;  /* xorshift64 */
    unsigned long long drawn = state;
    pthread_mutex_unlock(&lock);
    return (double)(drawn >> 11) / 9007199254740992.0;
}

static double card_delay(void) {
    double low = env_ms("SLOW_FSYNC_MIN_MS", 20.0), high = env_ms("SLOW_FSYNC_MAX_MS", 200.0);
    if (high <= 0) return 0.0;
    if (low <= 0) low = 0.001;
    double ms = exp(log(low) + (log(high) - log(low)) * next_uniform());
    struct timespec wait = {(time_t)(ms / 1000.0), (long)(fmod(ms, 1000.0) * 1e6)};
    while (nanosleep(&wait, &wait) != 0) {}
    return ms;
}

/* Notes the call: the delay, when it returned, the file's size when called, its path. */
static void note(double ms, long long size, int fd) {
    const char *log = getenv("SLOW_FSYNC_LOG");
    if (!log || !*log) return;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, target, sizeof target - 1);
    target[length > 0 ? length : 0] = '\0';
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&lock);
    FILE *out = fopen(log, "a");
    if (out) {
        fprintf(out, "%.3f %.6f %lld %s\n", ms, now.tv_sec + now.tv_nsec / 1e9, size,
                length > 0 ? target : "?");
        fclose(out);
    }
    pthread_mutex_unlock(&lock);
}

static long long size_of(int fd) {
    struct stat info;
    return fstat(fd, &info) == 0 ? (long long)info.st_size : -1;
}

/* The real call, after the card's delay; noted; the caller sees the real call's error. */
static int slowly(int (*real)(int), int fd) {
    long long size = size_of(fd);
    double ms = card_delay();
    int result = real(fd), error = errno;
    note(ms, size, fd);
    errno = error;
    return result;
}

int fsync(int fd) {
    static int (*real)(int) = NULL;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return slowly(real, fd);
}

int fdatasync(int fd) {
    static int (*real)(int) = NULL;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return slowly(real, fd);
}
