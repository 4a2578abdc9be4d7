#!/usr/bin/env bash
# Every production-scale figure of BENCHMARKS.md ("Production scale") on this machine, from a
# release binary it is given (it builds nothing):
#
#   scripts/gpu-bench.sh [ERODE] [--small]
#
# ERODE defaults to target/release/erode. It prints, one line each: the grid model on the GPU
# at 1024², 4096², 8192² and 16384² (iterations per second of the run alone, the books'
# relative error), the GPU books after 3,000 and 20,000 iterations at 1024², whole commands at
# 4096² (wall seconds and bytes written), the grid and stream-power models on 1, 2, 4 and all
# threads, and droplets on the GPU. --small runs every line at sizes a software GPU (lavapipe)
# manages in a minute, which is how CI checks that the script runs end to end.
#
# A line whose command fails says so (FAILED, its exit status) and the script goes on to the
# next; it exits 1 at the end when any did.
#
# Sizes above 4096² start dry (start_water = "dry"): the steady start's preparation is timed
# by the whole-command lines, and the iterations cost the same.
set -euo pipefail

erode=target/release/erode
small=0
for a in "$@"; do
    case "$a" in
        --small) small=1 ;;
        -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
        *) erode=$a ;;
    esac
done
if [ ! -x "$erode" ]; then
    echo "gpu-bench: no erode binary at $erode (build one: cargo build --release)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)

if [ "$small" = 1 ]; then
    sizes=(64 128); big=128; books=(50 200); iterations=(20 10); whole=128; scale=128; sp=128; droplets=16384
else
    sizes=(1024 4096 8192 16384); big=4096; books=(3000 20000); iterations=(3000 500 100 20); whole=4096; scale=4096
    sp=4096; droplets=16777216
fi

say() { printf '%s\n' "$*"; }
failed() {
    echo "$*" >> "$work/failed"
}
# runs one line's command; a failure is printed and counted, not the end of the script
line() {
    "$@" || { local rc=$?; say "FAILED (exit $rc): ${*:2}"; failed "$*"; }
}
# seconds of wall time of a command, its output discarded ("FAILED" when it fails)
wall() {
    local t0=$EPOCHREALTIME
    if "$@" > /dev/null; then
        awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
    else
        local rc=$?
        printf 'FAILED (exit %s)' "$rc"
        failed "$*"
    fi
}
# bytes under a folder (0 when there is none)
bytes() {
    du -sb "$1" 2> /dev/null | cut -f1 || echo 0
}

say "# erode gpu-bench, $(date -u +%Y-%m-%dT%H:%MZ), $cores cores, $("$erode" --version)"
"$erode" gpu-info | sed 's/^/# adapter /'

say "## grid on the GPU (default preset; iterations per second of the run alone)"
for k in "${!sizes[@]}"; do
    n=${sizes[$k]}
    sets=()
    if [ "$n" -gt "$big" ]; then sets=(--set 'start_water="dry"'); fi
    line "$erode" bench grid --backend gpu --size "$n" --iterations "${iterations[$k]}" "${sets[@]}"
done

say "## GPU books at ${sizes[0]}² (relative error), and the CPU's on the first run"
for it in "${books[@]}"; do
    line "$erode" bench grid --backend gpu --size "${sizes[0]}" --iterations "$it"
done
line "$erode" bench grid --backend cpu --size "${sizes[0]}" --iterations "${books[0]}"

say "## whole commands at $whole² (wall seconds, bytes written)"
"$erode" generate -q --size "$whole" --seed 7 --relief 300 --cell-size 4 -o "$work/t.tif"
s=$(wall "$erode" simulate grid -q "$work/t.tif" -o "$work/gpu" --backend gpu --iterations 10)
say "grid, GPU, 10 iterations: $s s wall, $(bytes "$work/gpu") bytes written"
s=$(wall "$erode" simulate grid -q "$work/t.tif" -o "$work/cpu" --threads 2 --iterations 1)
say "grid, CPU on 2 threads, 1 iteration: $s s wall, $(bytes "$work/cpu") bytes written"
rm -rf "$work/gpu" "$work/cpu"

threads=(1 2 4 "$cores")
say "## grid on the CPU at $scale², dry start, 2 iterations, by threads"
for t in "${threads[@]}"; do
    line "$erode" bench grid --size "$scale" --iterations 2 --threads "$t" --set 'start_water="dry"'
done

say "## stream power at $sp², 6 steps from a noisy plain, by threads (wall seconds)"
"$erode" generate -q --kind noise --size "$sp" --relief 1 --cell-size 100 -o "$work/plain.tif"
for t in "${threads[@]}"; do
    s=$(wall "$erode" simulate stream-power -q "$work/plain.tif" -o "$work/sp-$t" --years 60000 --threads "$t")
    say "stream power, $t threads: $s s wall"
    rm -rf "$work/sp-$t"
done

say "## droplets on the GPU at $whole², $droplets droplets"
line "$erode" bench droplet --backend gpu --size "$whole" --iterations "$droplets"
if [ -s "$work/failed" ]; then
    echo "gpu-bench: $(wc -l < "$work/failed") line(s) failed" >&2
    exit 1
fi
