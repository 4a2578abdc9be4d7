"""Draws docs/ranks/layout.png: a map of 40 rows cut into 3 blocks for 3 ranks, each rank's
window (its own rows and the halo rows of its neighbours) beside the map.

    python3 docs/ranks/layout.py   (needs Pillow)
"""
from PIL import Image, ImageDraw

ROWS, COLS, RANKS, HALO = 40, 24, 3, 5
CELL = 12
COLOURS = [(86, 140, 200), (230, 150, 60), (100, 175, 100)]


def owned(k):
    return range(k * ROWS // RANKS, (k + 1) * ROWS // RANKS)


def shade(c, f):
    return tuple(int(v + (255 - v) * f) for v in c)


width = (COLS + 4) * CELL * (RANKS + 1) + 40
height = (ROWS + 6) * CELL
img = Image.new("RGB", (width, height), "white")
d = ImageDraw.Draw(img)
top = 3 * CELL

# the whole map: every row coloured by the rank that owns it
x0 = 20
d.text((x0, 8), "the map: rows by owner", fill="black")
for k in range(RANKS):
    for r in owned(k):
        d.rectangle([x0, top + r * CELL, x0 + COLS * CELL, top + (r + 1) * CELL - 1], fill=COLOURS[k])
d.rectangle([x0, top, x0 + COLS * CELL, top + ROWS * CELL], outline="black")

# each rank's window: halo rows (pale, from the neighbour) around its own
for k in range(RANKS):
    x = x0 + (k + 1) * (COLS + 4) * CELL
    rows = owned(k)
    first = rows.start - (HALO if k > 0 else 0)
    last = rows.stop + (HALO if k + 1 < RANKS else 0)
    d.text((x, 8), f"rank {k}: {len(rows)} rows + halo", fill="black")
    for r in range(first, last):
        owner = next(j for j in range(RANKS) if r in owned(j))
        colour = COLOURS[owner] if owner == k else shade(COLOURS[owner], 0.6)
        y = top + r * CELL
        d.rectangle([x, y, x + COLS * CELL, y + CELL - 1], fill=colour)
    d.rectangle([x, top + first * CELL, x + COLS * CELL, top + last * CELL], outline="black")
    for r in (first, last):
        if r not in (0, ROWS):
            d.text((x + COLS * CELL + 4, top + r * CELL - 6), "cut", fill="black")

d.text((20, height - 2 * CELL), f"halo = {HALO} rows, refreshed from the owner after every sub-step", fill="black")
img.save("docs/ranks/layout.png")
