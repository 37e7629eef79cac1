#!/usr/bin/env bash
# Batch throughput on this machine: gaussian r=8 (sigma 8/3) over a folder of 24 real 5120x2880
# photos, halo with -j 1 and -j 2 against vips and G'MIC (driven by GNU parallel, as they have
# no folder mode), all writing JPEG quality 98. Each configuration runs twice; the faster counts.
#
#   scripts/bench-batch.sh [WORKDIR]        (default /tmp/halo-bench-batch)
#
# Needs (not installed by scripts/setup: only this benchmark uses them):
#   apt-get install libvips-tools gmic parallel plasma-workspace-wallpapers gnome-backgrounds
# The folder: Plasma's twelve 5120x2880 wallpapers as shipped (PNG and JPEG; the four RGBA PNGs,
# opaque, flattened to RGB because JPEG holds no alpha) plus twelve GNOME
# backgrounds (4096x4096) cropped to 5120x2880 with vips and saved as JPEG (preparation, untimed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
halo=${HALO:-$here/build/app/halo}
work=${1:-/tmp/halo-bench-batch}
photos=$work/photos
mkdir -p "$photos"

if [ "$(ls "$photos" | wc -l)" -lt 24 ]; then
  for f in /usr/share/wallpapers/*/contents/images/5120x2880.* /usr/share/wallpapers/*/contents/images_dark/5120x2880.*; do
    name=$(echo "$f" | cut -d/ -f5)$(echo "$f" | grep -q images_dark && echo -dark || true)
    if [ "$(vipsheader -f bands "$f")" = 4 ]; then  # JPEG output cannot hold alpha (opaque here)
      vips flatten "$f" "$photos/$name.png"
    else
      cp "$f" "$photos/$name.${f##*.}"
    fi
  done
  for f in $(ls /usr/share/backgrounds/gnome/*.webp | grep -v vnc | head -$((24 - $(ls "$photos" | wc -l)))); do
    vips thumbnail "$f" "$photos/gnome-$(basename "${f%.webp}").jpg[Q=95]" 5120 --height 2880 --crop centre
  done
fi
count=$(ls "$photos" | wc -l)
echo "photos: $count in $photos ($(vipsheader "$photos"/* | awk '{print $2}' | sort | uniq -c | tr '\n' ' '))"

sigma=2.6667  # halo's gaussian r=8 uses sigma r/3 and 2r+1 taps; vips cuts its mask at min-ampl
best() {      # best of two runs of "$@", in seconds
  local b=""
  for rep in 1 2; do
    rm -rf "$work/out" && mkdir -p "$work/out"
    local t0=$(date +%s.%N)
    "$@" > /dev/null 2> "$work/last.err" || { cat "$work/last.err"; exit 1; }
    local t=$(echo "$(date +%s.%N) - $t0" | bc)
    [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ] && b=$t
  done
  [ "$(ls "$work/out" | wc -l)" = "$count" ] || { echo "expected $count outputs"; exit 1; }
  echo "$b"
}
row() {  # name jobs seconds
  printf "| %-34s | %2s | %8.2f | %6.2f |\n" "$1" "$2" "$3" "$(echo "$count / $3" | bc -l)"
}

echo "| tool | -j | seconds | images/s |"
echo "|---|---|---|---|"
export photos work sigma
for j in 1 2; do
  row "halo run (device: $($halo devices 2>/dev/null | grep -m1 -o 'pthread[^ ]*\|NVIDIA[^(]*' || echo auto))" $j \
      "$(best "$halo" run "$photos" -f gaussian:r=8 -o "$work/out/{stem}.jpg" -j $j)"
done
for j in 1 2; do
  row "halo run --device ref" $j \
      "$(best "$halo" --device ref run "$photos" -f gaussian:r=8 -o "$work/out/{stem}.jpg" -j $j)"
done
for j in 1 2; do
  row "vips gaussblur (parallel)" $j "$(best sh -c "ls $photos | parallel -j $j \
      'vips gaussblur $photos/{} $work/out/{.}.jpg[Q=98] $sigma --min-ampl 0.0111'")"
done
for j in 1 2; do
  row "gmic blur gaussian (parallel)" $j "$(best sh -c "ls $photos | parallel -j $j \
      'gmic -v -1 $photos/{} -blur $sigma,1,1 -o $work/out/{.}.jpg,98'")"
done
