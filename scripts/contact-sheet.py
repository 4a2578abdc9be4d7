#!/usr/bin/env python3
"""A contact sheet of images for the docs: each image shrunk to TILE px (Lanczos), labelled,
four across. 16-bit greys are shown at their top 8 bits.

    python3 scripts/contact-sheet.py OUT.jpg TILE FILE LABEL [FILE LABEL ...]

Needs Pillow (pip install pillow)."""
import sys

from PIL import Image, ImageDraw

out, tile = sys.argv[1], int(sys.argv[2])
items = list(zip(sys.argv[3::2], sys.argv[4::2]))
cols = min(4, len(items)); rows = (len(items) + cols - 1) // cols
sheet = Image.new("RGB", (cols * tile, rows * (tile + 18)), "white")
d = ImageDraw.Draw(sheet)
for k, (f, label) in enumerate(items):
    im = Image.open(f)
    if im.mode == "I;16" or im.mode == "I":
        im = im.point(lambda v: v / 256).convert("L")
    if im.mode == "RGBA":
        im = im.convert("RGB")
    im = im.convert("RGB").resize((tile, tile), Image.LANCZOS)
    x, y = (k % cols) * tile, (k // cols) * (tile + 18)
    sheet.paste(im, (x, y + 18))
    d.text((x + 4, y + 3), label, fill="black")
sheet.save(out, quality=88) if out.lower().endswith((".jpg", ".jpeg")) else sheet.save(out)
