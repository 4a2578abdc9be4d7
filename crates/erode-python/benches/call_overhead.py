"""What a Python `run` call costs on top of the Rust it calls, at 256 x 256 cells.

Runs the grid model 300 iterations as one `run(300)` (all of it inside Rust) and as 300 calls of
`run(1)` (a Python call, argument conversion, GIL release and a state sync each), alternating,
and prints the median of each and the overhead. Both give the same bytes (checked).

    python crates/erode-python/benches/call_overhead.py
"""

import statistics
import time

import numpy as np

import erode

y, x = np.mgrid[0:256, 0:256] / 256.0
terrain = (40 + 40 * np.sin(3 * x) * np.cos(2 * y) + np.random.default_rng(1).random((256, 256))).astype(np.float32)
N = 300
one_call, many_calls = [], []
for _ in range(7):
    a = erode.Grid(terrain, cell_size=2.0)
    b = erode.Grid(terrain, cell_size=2.0)
    t0 = time.perf_counter()
    a.run(N)
    t1 = time.perf_counter()
    for _ in range(N):
        b.run(1)
    t2 = time.perf_counter()
    assert a.maps()["height"].tobytes() == b.maps()["height"].tobytes()
    one_call.append((t1 - t0) / N * 1e3)
    many_calls.append((t2 - t1) / N * 1e3)
rust, python = statistics.median(one_call), statistics.median(many_calls)
print(f"run({N}) once: {rust:.3f} ms/iteration; run(1) {N} times: {python:.3f} ms/iteration; "
      f"overhead per call {100 * (python / rust - 1):.1f} % (medians of 7 alternating runs)")
