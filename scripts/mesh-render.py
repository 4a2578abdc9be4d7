#!/usr/bin/env python3
"""Meshes from `erode mesh` drawn in perspective, lit and textured, as an engine would show them:
the docs' picture of an exported mesh (a software rasteriser: no GPU, no 3D tool).

    python3 scripts/mesh-render.py OUT.png TEXTURE.png MESH.obj [MESH.obj ...] [--tint]

Each MESH.obj is read as written (x east, y up, z south, metres; its own normals and UVs over the
whole map), TEXTURE.png is sampled at the UVs (`erode masks`' albedo.png), the light is the sun
low from the west. With several meshes (the chunks of `--chunk`) `--tint` shades
each chunk a little differently, so their borders show. Needs numpy and Pillow."""
import sys

import numpy as np
from PIL import Image

args = [a for a in sys.argv[1:] if not a.startswith("--")]
tint = "--tint" in sys.argv
out, texture_path, meshes = args[0], args[1], args[2:]
W, H = 1280, 800


def read_obj(path):
    v, vt, vn, faces = [], [], [], []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            v.append([float(x) for x in p[1:4]])
        elif p[0] == "vt":
            vt.append([float(x) for x in p[1:3]])
        elif p[0] == "vn":
            vn.append([float(x) for x in p[1:4]])
        elif p[0] == "f":
            faces.append([[int(i) - 1 if i else -1 for i in (q.split("/") + ["", ""])[:3]] for q in p[1:4]])
    f = np.array(faces)  # triangles x corners x (v, vt, vn)
    return np.array(v), np.array(vt), np.array(vn), f


texture = np.asarray(Image.open(texture_path).convert("RGB"), dtype=np.float64) / 255.0
th, tw = texture.shape[:2]
parts = [read_obj(m) for m in meshes]
allv = np.concatenate([p[0] for p in parts])
lo, hi = allv.min(axis=0), allv.max(axis=0)
centre = (lo + hi) / 2
span = max(hi[0] - lo[0], hi[2] - lo[2])
# the camera: south-west of the map, above it, looking at its centre
eye = centre + np.array([-0.42 * span, 0.5 * span, 0.62 * span])
forward = centre + np.array([0.0, -0.12 * span, 0.08 * span]) - eye
forward /= np.linalg.norm(forward)
right = np.cross(forward, [0.0, 1.0, 0.0])
right /= np.linalg.norm(right)
up = np.cross(right, forward)
focal = 1.25 * W / 2
sun = np.array([-1.0, 0.9, 0.25])
sun /= np.linalg.norm(sun)

image = np.zeros((H, W, 3))
image[:] = np.linspace([0.62, 0.72, 0.85], [0.85, 0.88, 0.92], H)[:, None, :]
depth = np.full((H, W), np.inf)
for k, (v, vt, vn, f) in enumerate(parts):
    rel = v - eye
    cam = np.stack([rel @ right, rel @ up, rel @ forward], axis=1)
    sx = W / 2 + focal * cam[:, 0] / cam[:, 2]
    sy = H / 2 - focal * cam[:, 1] / cam[:, 2]
    # per vertex: the texture at its UV (OBJ's v grows up the image), lit by its normal
    uv = vt[f[:, :, 1]]
    colour = texture[np.clip(((1 - uv[..., 1]) * (th - 1)).round().astype(int), 0, th - 1),
                     np.clip((uv[..., 0] * (tw - 1)).round().astype(int), 0, tw - 1)]
    light = 0.45 + 0.85 * np.clip(vn[f[:, :, 2]] @ sun, 0, 1)
    colour = colour * light[..., None]
    if tint:
        colour = colour * (0.88 + 0.12 * ((k * 7) % 5) / 4)
    for t in range(len(f)):
        i = f[t, :, 0]
        xs, ys, zs = sx[i], sy[i], cam[i, 2]
        x0, x1 = max(int(xs.min()), 0), min(int(xs.max()) + 1, W - 1)
        y0, y1 = max(int(ys.min()), 0), min(int(ys.max()) + 1, H - 1)
        if x0 > x1 or y0 > y1:
            continue
        px, py = np.meshgrid(np.arange(x0, x1 + 1) + 0.5, np.arange(y0, y1 + 1) + 0.5)
        d = (ys[1] - ys[2]) * (xs[0] - xs[2]) + (xs[2] - xs[1]) * (ys[0] - ys[2])
        if abs(d) < 1e-12:
            continue
        l0 = ((ys[1] - ys[2]) * (px - xs[2]) + (xs[2] - xs[1]) * (py - ys[2])) / d
        l1 = ((ys[2] - ys[0]) * (px - xs[2]) + (xs[0] - xs[2]) * (py - ys[2])) / d
        l2 = 1 - l0 - l1
        inside = (l0 >= 0) & (l1 >= 0) & (l2 >= 0)
        if not inside.any():
            continue
        z = 1 / (l0 / zs[0] + l1 / zs[1] + l2 / zs[2])
        box = depth[y0:y1 + 1, x0:x1 + 1]
        near = inside & (z < box)
        box[near] = z[near]
        c = l0[..., None] * colour[t, 0] + l1[..., None] * colour[t, 1] + l2[..., None] * colour[t, 2]
        image[y0:y1 + 1, x0:x1 + 1][near] = c[near]
Image.fromarray((np.clip(image, 0, 1) * 255).astype(np.uint8)).save(out)
