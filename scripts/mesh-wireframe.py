#!/usr/bin/env python3
"""A mesh's triangles drawn from above over a picture of the same map, for the docs.

    python3 scripts/mesh-wireframe.py MESH.obj PICTURE.png OUT.png CELL_SIZE [CROP_X CROP_Y SIZE]

MESH.obj from `erode mesh` (x east, z south, metres, the north-west cell's centre at 0, 0),
PICTURE.png one pixel a cell (`erode render`), CELL_SIZE the map's cells in metres; the
optional crop (pixels) is drawn 2x. Needs Pillow (pip install pillow)."""
import sys

from PIL import Image, ImageDraw

mesh, picture, out, cell = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
crop = [int(v) for v in sys.argv[5:8]] if len(sys.argv) > 5 else None
points, faces = [], []
for line in open(mesh):
    part = line.split()
    if not part:
        continue
    if part[0] == "v":
        points.append((float(part[1]) / cell, float(part[3]) / cell))
    elif part[0] == "f":
        faces.append([int(p.split("/")[0]) - 1 for p in part[1:4]])
image = Image.open(picture).convert("RGB")
scale, (ox, oy) = 1, (0, 0)
if crop:
    x, y, size = crop
    image = image.crop((x, y, x + size, y + size))
    scale, (ox, oy) = 2, (x, y)
    image = image.resize((size * 2, size * 2), Image.NEAREST)
draw = ImageDraw.Draw(image)
for f in faces:
    p = [((points[i][0] - ox) * scale + scale / 2, (points[i][1] - oy) * scale + scale / 2) for i in f]
    draw.line(p + [p[0]], fill=(20, 20, 20), width=1)
image.save(out)
print(f"{len(faces)} triangles")
