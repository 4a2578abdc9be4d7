#!/usr/bin/env bash
# Regenerates the grid model's pictures in docs/grid/ and prints the figures of
# docs/grid-model.md (`erode analyze` of every map), from the release binary:
#   cargo build --release && scripts/fetch-testdata.sh && scripts/grid-figures.sh [WORKDIR]
# The bench terrains at 1024² take ~20 s a run on 2 cores; the whole script ~5 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
erode="$root/target/release/erode"
out="$root/docs/grid"
work=${1:-$(mktemp -d)}
mkdir -p "$work" "$out"
cd "$work"
e() { "$erode" -q "$@"; }

# full maps at 512 px for the page, crops 1:1 (the 384² cells at the centre)
picture() { # MAP NAME
  e resample "$1" --size 512 -o "_$2.tif"
  e render "_$2.tif" -o "$out/$2.png"
}
crop() { # MAP NAME
  e render "$1" --crop 320,320,384,384 -o "$out/$2-crop.png"
}

e generate --size 1024 --seed 1 --relief 100 --cell-size 2 --feature-size 256 --octaves 8 -o artist.tif
e generate --size 1024 --seed 1 --relief 1500 --cell-size 30 --feature-size 256 --octaves 8 -o mountain.tif
picture artist.tif artist-before
crop artist.tif artist-before
crop mountain.tif mountain-before
for preset in rivers gentle badlands alpine classic; do
  e simulate grid artist.tif --preset "$preset" -o "artist-$preset"
  picture "artist-$preset/height.tif" "artist-$preset"
  crop "artist-$preset/height.tif" "artist-$preset"
done
e simulate grid mountain.tif -o mountain-rivers
crop mountain-rivers/height.tif mountain-rivers

e render "$root/testdata/lidar-dem.tif" -o "$out/lidar-before.png"
e simulate grid "$root/testdata/lidar-dem.tif" -o lidar-rivers
e render lidar-rivers/height.tif -o "$out/lidar-rivers.png"
e simulate grid "$root/testdata/terra-elev.tif" -o terra-rivers

# the real mountain DEM, as it is and three times as steep, with the default and the old one
# (one material, every slope worn to tan 0.55, the bed change limit 0.1 at any cell size: 0.644
# here is 0.1 on these 83 m cells)
e convert "$root/testdata/jacksboro-dem.npy" --cell-size 74.4x92.5 -o real.tif
e rescale real.tif --factor 3 -o steep.tif
old=(--set sediment_layer=false --set talus_scale=1 --set talus_bias=0.05 --set soil_depth=0)
for dem in real steep; do
  e simulate grid "$dem.tif" -o "$dem-rivers"
  e simulate grid "$dem.tif" "${old[@]}" --set bed_change_limit=0.644 -o "$dem-old"
  e render "$dem.tif" -o "$out/jacksboro-$dem.png"
  e render "$dem-rivers/height.tif" -o "$out/jacksboro-$dem-rivers.png"
  e render "$dem-old/height.tif" -o "$out/jacksboro-$dem-old.png"
done

row() { # LABEL MAP
  "$erode" analyze -q --json "$2" | python3 -c '
import json, sys
d = json.load(sys.stdin)
f, r, dep = d["slope_area"], d["fine_relief"], d["depressions"]
fit = "no fit | –" if f is None else "%.3f | %.2f" % (f["theta"], f["r_squared"])
flooded = 100 * dep["cells"] / d["valid_cells"]
g = lambda v, fmt: "–" if v is None else fmt % v
print("| %s | %s | %.3g | %.3g | %.2f %% | %.2f | %.3g (%s) | %s |" % (
    sys.argv[1], fit, d["drainage"]["density_per_km"], dep["per_km2"], flooded,
    d["steep_slope"], r["all_m"], g(r["hillslopes_m"], "%.3g"), g(r["axis_to_diagonal"], "%.2f")))' "$1"
}
echo "| map | θ | R² | drainage km/km² | pits per km² | in closed depressions | steepest 1 % from | fine relief m (hillslopes) | axis/diagonal |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
row "artist input" artist.tif
for preset in rivers gentle badlands alpine classic; do row "artist, $preset" "artist-$preset/height.tif"; done
row "mountain input" mountain.tif
row "mountain, rivers" mountain-rivers/height.tif
row "lidar DEM" "$root/testdata/lidar-dem.tif"
row "lidar DEM, rivers" lidar-rivers/height.tif
row "terra DEM" "$root/testdata/terra-elev.tif"
row "terra DEM, rivers" terra-rivers/height.tif
for dem in real steep; do
  row "Jacksboro $dem" "$dem.tif"
  row "Jacksboro $dem, old default" "$dem-old/height.tif"
  row "Jacksboro $dem, rivers" "$dem-rivers/height.tif"
done
