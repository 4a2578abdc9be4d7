#!/usr/bin/env bash
# Downloads the real DEMs the tests read into testdata/ (not committed), checking each by sha256.
#  - lidar-dem.tif: float32, tiled, projected (NAD83 / UTM 15N), GDAL_NODATA; 400 x 400.
#    From the PyPI wheel lidar==0.8.4 (MIT), file lidar/data/dem.tif.
#  - terra-elev.tif: int16, LZW, geographic (WGS 84), GDAL_NODATA -32768; 95 x 90 (Luxembourg).
#    From Debian's r-cran-terra package (GPL-3), file terra/ex/elev.tif.
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
echo "testdata: ok"
