#!/usr/bin/env bash
# Downloads the real DEMs the tests read into testdata/ (not committed), checking each by sha256.
#  - lidar-dem.tif: float32, tiled, projected (NAD83 / UTM 15N), GDAL_NODATA; 400 x 400.
#    From the PyPI wheel lidar==0.8.4 (MIT), file lidar/data/dem.tif.
#  - terra-elev.tif: int16, LZW, geographic (WGS 84), GDAL_NODATA -32768; 95 x 90 (Luxembourg).
#    From Debian's r-cran-terra package (GPL-3), file terra/ex/elev.tif.
#  - jacksboro-dem.npy: int16 heights in metres, 403 x 344 cells of 3 arc-seconds (about
#    74.4 x 92.5 m at 36.6° N): the Cumberland Mountains around the Jacksboro fault, Tennessee
#    (a USGS DEM, public domain), 236-1076 m. From matplotlib's sample data in the PyPI wheel
#    matplotlib==3.11.2, file matplotlib/mpl-data/sample_data/jacksboro_fault_dem.npz (member
#    elevation.npy). Its cell size is not in the file: give `--cell-size 74.4x92.5`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { echo "$2  $1" | sha256sum -c --quiet - ; }

if ! check testdata/lidar-dem.tif c0f525ea2f1ab78becf64dabdc0ba386de34c092151a95d463ae9b6cd74154f4 >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps lidar==0.8.4 -d "$tmp/lidar"
  python3 - "$tmp"/lidar/lidar-0.8.4-*.whl testdata/lidar-dem.tif <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("lidar/data/dem.tif"))
PY
  check testdata/lidar-dem.tif c0f525ea2f1ab78becf64dabdc0ba386de34c092151a95d463ae9b6cd74154f4
fi

if ! check testdata/terra-elev.tif c6a4967fe5b720499e75a3453e9814f00a416167b8e0926a4c55f5100ae4ddb2 >/dev/null 2>&1; then
  (cd "$tmp" && apt-get download r-cran-terra >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download r-cran-terra >/dev/null; })
  dpkg-deb -x "$tmp"/r-cran-terra_*.deb "$tmp/terra"
  cp "$tmp/terra/usr/lib/R/site-library/terra/ex/elev.tif" testdata/terra-elev.tif
  check testdata/terra-elev.tif c6a4967fe5b720499e75a3453e9814f00a416167b8e0926a4c55f5100ae4ddb2
fi
if ! check testdata/jacksboro-dem.npy 557fb99776fdf4517e56a2c1b8b45c103b9462a72346c2294168a5957199cb1e >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.11 matplotlib==3.11.2 -d "$tmp/mpl"
  python3 - "$tmp"/mpl/matplotlib-3.11.2-*.whl testdata/jacksboro-dem.npy <<'PY'
import io, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    npz = z.read("matplotlib/mpl-data/sample_data/jacksboro_fault_dem.npz")
with zipfile.ZipFile(io.BytesIO(npz)) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("elevation.npy"))
PY
  check testdata/jacksboro-dem.npy 557fb99776fdf4517e56a2c1b8b45c103b9462a72346c2294168a5957199cb1e
fi
echo "testdata: ok"
