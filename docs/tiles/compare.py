"""Compares a tiled run's heights with one run's over the whole map (docs/tiles.md).

python3 compare.py INPUT WHOLE TILED TILE   (heightmaps erode reads; TILE: --tiles' size)
Needs numpy and erode on PATH (or ERODE=/path/to/erode).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

ERODE = os.environ.get("ERODE", "erode")


def load(path):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "map.npy")
        subprocess.run([ERODE, "-q", "convert", path, "-o", out], check=True)
        return np.load(out).astype(np.float64)


def steps(f):
    return np.concatenate([np.abs(np.diff(f, axis=0)).ravel(), np.abs(np.diff(f, axis=1)).ravel()])


def main():
    z, whole, tiled = (load(p) for p in sys.argv[1:4])
    tile = int(sys.argv[4])
    a, b = (whole - z).ravel(), (tiled - z).ravel()
    d = tiled - whole
    print(f"height change correlation {np.corrcoef(a, b)[0, 1]:.5f} (change rms {a.std():.3f} m one run, {b.std():.3f} m tiles)")
    print(f"difference rms {d.std():.4f} m, largest {np.abs(d).max():.3f} m")
    # the cores' edges: the cuts of --tiles (cores as even as the size allows)
    n = tiled.shape[0]
    k = -(-n // tile)
    cuts = [i * n // k for i in range(1, k)]
    mids = [c - n // (2 * k) for c in cuts]

    def across(f, c):
        return np.concatenate([np.abs(f[:, c] - f[:, c - 1]), np.abs(f[c, :] - f[c - 1, :])])

    print(f"99th percentile step {np.quantile(steps(tiled), 0.99):.3f} m; steepest across a core's edge "
          f"{max(across(tiled, c).max() for c in cuts):.3f} m (the input there {max(across(z, c).max() for c in cuts):.3f} m)")
    print(f"steepest step across a core's edge over one run's {max((across(tiled, c) - across(whole, c)).max() for c in cuts):.3f} m")
    print(f"difference's step, mean: at the edges {np.mean([across(d, c).mean() for c in cuts]):.4f} m, "
          f"mid-core {np.mean([across(d, c).mean() for c in mids]):.4f} m")


if __name__ == "__main__":
    main()
