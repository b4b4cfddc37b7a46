"""A minimal heapq event-loop simulator: the yardstick for `emulator.simulate`'s speed.

The same system as the emulator's default path: one dispatcher, N FIFO unit-speed
servers, Poisson arrivals at rate load*N, exp(1) job sizes drawn at arrival, zero
message latency, and the same decision rules (JSQ, SQ(d), JIQ, JBT-d, random)
with ties broken uniformly at random. Jobs ``0 .. warmup-1`` warm the system up,
the next ``jobs`` are measured, and the run stops when the last measured job has
left, as in the emulator.

It is written the way one would write a fast minimal simulator by hand, so that
the ratio emulator / baseline is an honest measure of what the emulator's
structure costs: local variables, one heap entry per busy server (its next
completion), the next arrival kept outside the heap, random numbers drawn from
numpy in batches (as the emulator does). It keeps no message counters and no
statistics beyond the sum of response times. It uses its own random streams, so
its mean response agrees with the emulator's statistically, not digit for digit.

    python benchmarks/baseline.py sqd --servers 100 --jobs 200000
"""

from __future__ import annotations

import argparse
import heapq
import time
from collections import deque
from collections.abc import Callable, Iterator

import numpy as np

BATCH = 4096


def _batched(draw: Callable[[], np.ndarray]) -> Iterator[float]:
    while True:
        yield from draw().tolist()


def simulate(policy: str, servers: int = 10, load: float = 0.9, jobs: int = 100_000,
             warmup: int | None = None, seed: int = 1, d: int = 2, period: float = 100.0) -> dict[str, float]:
    """Simulate one run; return mean response time and jobs simulated."""
    n = servers
    warmup = jobs // 10 if warmup is None else warmup
    a_rng, s_rng, p_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    mean_gap = 1.0 / (load * n)
    gaps = _batched(lambda: a_rng.exponential(mean_gap, BATCH))
    sizes = _batched(lambda: s_rng.exponential(1.0, BATCH))
    uniforms = _batched(lambda: p_rng.random(BATCH))
    u = uniforms.__next__

    length = [0] * n
    queue: list[deque] = [deque() for _ in range(n)]  # (arrival time, size, measured) per job here
    heap: list[tuple[float, int]] = []  # (completion time of the job in service, server)
    push, pop = heapq.heappush, heapq.heappop

    # Pull-based policies: a list of server ids with O(1) random removal.
    listed: list[int] = []
    where = [-1] * n  # position in `listed`, -1 if absent
    threshold = 0
    # The policy as booleans, so that the loop tests no strings.
    is_sqd, is_jsq, is_jiq, is_jbt = (policy == name for name in ("sqd", "jsq", "jiq", "jbt"))
    next_update = period if is_jbt else float("inf")
    if is_jiq or is_jbt:
        listed = list(range(n))  # every server starts idle (and below threshold 0)
        where = list(range(n))

    def take(i: int) -> int:
        sid = listed[i]
        last = listed.pop()
        if last != sid:
            listed[i] = last
            where[last] = i
        where[sid] = -1
        return sid

    def add(sid: int) -> None:
        if where[sid] < 0:
            where[sid] = len(listed)
            listed.append(sid)

    arrived = 0
    measured_end = warmup + jobs
    finished = 0
    sum_response = 0.0
    t_next = next(gaps)
    now = 0.0
    while finished < jobs:
        if heap and heap[0][0] < t_next and heap[0][0] < next_update:
            # A departure.
            now, sid = pop(heap)
            q = queue[sid]
            arrival, _size, measured = q.popleft()
            length[sid] -= 1
            if measured:
                sum_response += now - arrival
                finished += 1
            if q:
                push(heap, (now + q[0][1], sid))
            if is_jiq:
                if not q:
                    add(sid)
            elif is_jbt and length[sid] <= threshold:
                add(sid)
        elif next_update < t_next:
            # JBT-d: sample d servers, broadcast the smallest length as the threshold.
            now = next_update
            next_update += period
            first = int(u() * n)
            second = int(u() * (n - 1))
            threshold = min(length[first], length[second + 1 if second >= first else second])
            for sid in range(n):
                if length[sid] <= threshold:
                    add(sid)
        else:
            # An arrival: choose a server.
            now = t_next
            t_next = now + next(gaps)
            if is_sqd:
                a = int(u() * n)
                b = int(u() * (n - 1))
                if b >= a:
                    b += 1
                la, lb = length[a], length[b]
                sid = a if la < lb or (la == lb and u() < 0.5) else b
            elif is_jsq:
                low = min(length)
                ties = [i for i in range(n) if length[i] == low]
                sid = ties[int(u() * len(ties))]
            elif is_jiq or is_jbt:
                if listed:
                    sid = take(int(u() * len(listed)))
                    if is_jbt and length[sid] + 1 <= threshold:
                        add(sid)  # still below after this job: report again
                else:
                    sid = int(u() * n)
            else:  # random
                sid = int(u() * n)
            size = next(sizes)
            q = queue[sid]
            q.append((now, size, warmup <= arrived < measured_end))
            arrived += 1
            length[sid] += 1
            if len(q) == 1:
                push(heap, (now + size, sid))
    return {"mean_response": sum_response / jobs, "arrivals": arrived, "sim_time": now}


def main() -> None:
    parser = argparse.ArgumentParser(description="minimal heapq load-balancing simulator")
    parser.add_argument("policy", choices=["jsq", "sqd", "jiq", "jbt", "random"])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--jobs", type=int, default=200_000)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.process_time()
    result = simulate(args.policy, args.servers, args.load, args.jobs, args.warmup, args.seed)
    cpu = time.process_time() - started
    print(f"{args.policy} N={args.servers} load={args.load}: mean response {result['mean_response']:.4f}, "
          f"{result['arrivals']} arrivals, {cpu:.2f} s CPU, "
          f"{result['arrivals'] / cpu / 1000:.0f}k jobs/s")


if __name__ == "__main__":
    main()
