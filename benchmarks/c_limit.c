/* A hand-written C event loop of the zero-latency model: the yardstick of the compiled engine.
 *
 *     cc -O3 -march=native -o c_limit c_limit.c -lm
 *     ./c_limit jsq 10 1 5500000 1      # policy, servers N, d (SQ(d)), jobs, seed
 *     ./c_limit sqd 100 2 5500000 1
 *
 * One dispatcher, N unit-speed FIFO servers, Poisson arrivals at rate 0.9 N, exp(1) sizes
 * drawn at arrival; JSQ (a scan of the N lengths) or SQ(d) (d distinct servers sampled),
 * ties broken uniformly at random. A binary heap holds one entry per busy server (its next
 * departure), the next arrival is kept beside it, each server's queue is a ring of
 * (arrival, size) that doubles when full. Uniforms come from xoshiro256** (seeded by
 * splitmix64), exponentials are -log(u). The first tenth of the jobs is the warm-up.
 *
 * It prints one line: policy, N, d, jobs, CPU nanoseconds per job (the process's CPU
 * clock around the whole run, allocation included) and the measured jobs' mean response,
 * so that one can see it simulates the same system as the emulator (its random streams
 * are its own: the agreement is statistical).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t s[4];

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next64(void) { /* xoshiro256** */
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}

static inline double uniform(void) { return (next64() >> 11) * 0x1.0p-53; } /* [0, 1) */

static inline double exponential(double mean) { /* -log(u), u in (0, 1] */
    return -log(((next64() >> 11) + 1) * 0x1.0p-53) * mean;
}

static void seed(uint64_t x) { /* splitmix64 */
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        s[i] = z ^ (z >> 31);
    }
}

typedef struct { double t; int64_t sid; } Event;
typedef struct { double arrival, size; } Job;
typedef struct { Job *jobs; uint32_t head, count, mask; } Ring;

static Event *heap;
static int64_t heap_n;

static void push(double t, int64_t sid) {
    int64_t i = heap_n++;
    while (i > 0) {
        int64_t parent = (i - 1) >> 1;
        if (heap[parent].t <= t) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i].t = t;
    heap[i].sid = sid;
}

static void replace_top(Event last) { /* the first event leaves, ``last`` takes its place */
    int64_t i = 0;
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= heap_n) break;
        if (child + 1 < heap_n && heap[child + 1].t < heap[child].t) child++;
        if (last.t <= heap[child].t) break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
}

static void enqueue(Ring *r, double arrival, double size) {
    if (r->count > r->mask) { /* full: twice the room, the ring unrolled from its head */
        uint32_t cap = 2 * (r->mask + 1);
        Job *jobs = malloc(cap * sizeof(Job));
        for (uint32_t k = 0; k < r->count; k++) jobs[k] = r->jobs[(r->head + k) & r->mask];
        free(r->jobs);
        r->jobs = jobs;
        r->head = 0;
        r->mask = cap - 1;
    }
    Job *j = &r->jobs[(r->head + r->count) & r->mask];
    j->arrival = arrival;
    j->size = size;
    r->count++;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: c_limit jsq|sqd SERVERS D JOBS SEED\n");
        return 2;
    }
    int jsq = strcmp(argv[1], "jsq") == 0;
    if (!jsq && strcmp(argv[1], "sqd") != 0) {
        fprintf(stderr, "c_limit: policy must be jsq or sqd, not '%s'\n", argv[1]);
        return 2;
    }
    int64_t n = atoll(argv[2]), d = atoll(argv[3]), total = atoll(argv[4]);
    if (n < 1 || total < 10 || (!jsq && (d < 1 || d > n || d > 64))) {
        fprintf(stderr, "c_limit: need SERVERS >= 1, JOBS >= 10 and 1 <= D <= min(SERVERS, 64)\n");
        return 2;
    }
    seed(strtoull(argv[5], NULL, 10));
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);

    const double load = 0.9, mean_gap = 1.0 / (load * (double)n);
    const int64_t warmup = total / 11; /* 5e5 of 5.5e6: as the emulator's jobs // 10 warm-up */
    Ring *rings = malloc(n * sizeof(Ring));
    for (int64_t k = 0; k < n; k++) {
        rings[k].jobs = malloc(4 * sizeof(Job));
        rings[k].head = rings[k].count = 0;
        rings[k].mask = 3;
    }
    heap = malloc(n * sizeof(Event));
    heap_n = 0;
    int64_t picked[64];

    double next_arrival = exponential(mean_gap), opened = INFINITY, sum_response = 0.0;
    int64_t created = 0, measured = 0;
    while (created < total || heap_n > 0) {
        if (heap_n == 0 || next_arrival < heap[0].t) { /* an arrival */
            double now = next_arrival;
            if (created == warmup) opened = now;
            int64_t best;
            if (jsq) { /* the shortest of all N, ties uniformly (reservoir) */
                best = 0;
                uint32_t low = rings[0].count, ties = 1;
                for (int64_t k = 1; k < n; k++) {
                    uint32_t c = rings[k].count;
                    if (c < low) { best = k; low = c; ties = 1; }
                    else if (c == low && uniform() * ++ties < 1.0) best = k;
                }
            } else { /* d distinct servers, the shortest, ties uniformly */
                int64_t got = 0;
                while (got < d) {
                    int64_t x = (int64_t)(uniform() * n), seen = 0;
                    for (int64_t k = 0; k < got; k++) seen |= picked[k] == x;
                    if (!seen) picked[got++] = x;
                }
                best = picked[0];
                uint32_t low = rings[best].count, ties = 1;
                for (int64_t k = 1; k < d; k++) {
                    uint32_t c = rings[picked[k]].count;
                    if (c < low) { best = picked[k]; low = c; ties = 1; }
                    else if (c == low && uniform() * ++ties < 1.0) best = picked[k];
                }
            }
            double size = exponential(1.0);
            enqueue(&rings[best], now, size);
            if (rings[best].count == 1) push(now + size, best);
            created++;
            next_arrival = created < total ? now + exponential(mean_gap) : INFINITY;
        } else { /* a departure: the server's first job leaves, the next one starts */
            double now = heap[0].t;
            int64_t sid = heap[0].sid;
            Ring *r = &rings[sid];
            Job *j = &r->jobs[r->head];
            if (j->arrival >= opened) {
                sum_response += now - j->arrival;
                measured++;
            }
            r->head = (r->head + 1) & r->mask;
            r->count--;
            if (r->count > 0) { /* its next departure replaces this one */
                Event e = {now + r->jobs[r->head].size, sid};
                replace_top(e);
            } else {
                replace_top(heap[--heap_n]);
            }
        }
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)total;
    printf("%s %lld %lld %lld %.1f %.4f\n", argv[1], (long long)n, (long long)(jsq ? 0 : d),
           (long long)total, ns, sum_response / (double)measured);
    for (int64_t k = 0; k < n; k++) free(rings[k].jobs);
    free(rings);
    free(heap);
    return 0;
}
