"""Draws docs/ranks/tiles.png: a map of 32 rows and 40 columns cut into 2 x 2 tiles for 4 ranks
(`--rank-columns 2`: two bands of rows, each band's columns in two parts), and rank 3's window:
its own cells, the halo rows and columns of its neighbours, and the corner that comes with the
columns swapped after the rows.

    python3 docs/ranks/tiles.py   (needs Pillow)
"""
from PIL import Image, ImageDraw

ROWS, COLS, BANDS, PARTS, HALO = 32, 40, 2, 2, 5
CELL = 12
COLOURS = [(86, 140, 200), (230, 150, 60), (100, 175, 100), (170, 110, 190)]


def rows_of(b):
    return range(b * ROWS // BANDS, (b + 1) * ROWS // BANDS)


def cols_of(j):
    return range(j * COLS // PARTS, (j + 1) * COLS // PARTS)


def owner(r, c):
    b = next(b for b in range(BANDS) if r in rows_of(b))
    j = next(j for j in range(PARTS) if c in cols_of(j))
    return b * PARTS + j


def shade(c, f):
    return tuple(int(v + (255 - v) * f) for v in c)


width = 2 * (COLS + 6) * CELL + 40
height = (ROWS + 6) * CELL
img = Image.new("RGB", (width, height), "white")
d = ImageDraw.Draw(img)
top = 3 * CELL

# the whole map: every cell coloured by the rank that owns it
x0 = 20
d.text((x0, 8), "the map: 2 bands x 2 parts (ranks 0-3)", fill="black")
for r in range(ROWS):
    for c in range(COLS):
        x, y = x0 + c * CELL, top + r * CELL
        d.rectangle([x, y, x + CELL - 1, y + CELL - 1], fill=COLOURS[owner(r, c)])
d.rectangle([x0, top, x0 + COLS * CELL, top + ROWS * CELL], outline="black")

# rank 3's window (the bottom right tile): its own cells, and pale where a neighbour owns them
k = 3
own_rows, own_cols = rows_of(k // PARTS), cols_of(k % PARTS)
first_r, first_c = own_rows.start - HALO, own_cols.start - HALO
x1 = x0 + (COLS + 6) * CELL
d.text((x1, 8), f"rank {k}: {len(own_rows)} x {len(own_cols)} cells + halo", fill="black")
for r in range(first_r, own_rows.stop):
    for c in range(first_c, own_cols.stop):
        o = owner(r, c)
        colour = COLOURS[o] if o == k else shade(COLOURS[o], 0.6)
        x, y = x1 + c * CELL, top + r * CELL
        d.rectangle([x, y, x + CELL - 1, y + CELL - 1], fill=colour)
d.rectangle([x1 + first_c * CELL, top + first_r * CELL, x1 + own_cols.stop * CELL, top + own_rows.stop * CELL], outline="black")
d.text((x1 + first_c * CELL, top + (first_r - 2) * CELL), "rows from rank 1, then columns from rank 2", fill="black")
d.text((x1 + first_c * CELL - 7 * CELL, top + (first_r + 2) * CELL), "corner ->", fill="black")

d.text((20, height - 2 * CELL), f"halo = {HALO} rows and columns; the rows are swapped first, then the columns of every row", fill="black")
img.save("docs/ranks/tiles.png")
