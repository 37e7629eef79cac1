#!/usr/bin/env bash
# EXR sequences end to end: 48 (FRAMES) copies of a 1080p 11-channel float ZIP multilayer frame
# (tests/data/render/scene_4spp.exr resized by halo) denoised by `halo run -j JOBS` and copied by
# halo (--device ref) against oiiotool copies in JOBS processes; prints each call's wall time.
#
#   scripts/bench-exr-sequence.sh HALO OIIOTOOL [JOBS] [REPEATS]
#
# On the GPU machine: pack with ../shared/scripts/device-pack-cli (adding /usr/bin/oiiotool and
# the module), copy scene_4spp.exr and rt_hdr_alb_nrm.tza in, and run
# `scripts/bench-exr-sequence.sh .gpu/bin/halo .gpu/bin/oiiotool 16 3` there.
set -u
halo=$1 oiiotool=$2 jobs=${3:-$(nproc)} repeats=${4:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
scene=${SCENE:-$here/tests/data/render/scene_4spp.exr}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in" "$work/out" "$work/copy" "$work/peer"
"$halo" --device ref run "$scene" -f resize:w=1920:h=1080 --type float --compression zip \
  -o "$work/frame.exr"
for i in $(seq -w 1 "${FRAMES:-48}"); do cp "$work/frame.exr" "$work/in/shot.00$i.exr"; done
"$halo" run "$work/in/shot.0001.exr" -f denoise -o "$work/warm.exr"  # kernels compiled once
ms() {
  local start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  local rc=$?
  echo "$(( ($(date +%s%N) - start) / 1000000 )) ms (exit $rc)"
}
for r in $(seq 1 "$repeats"); do
  echo "repeat $r"
  echo -n "  halo run -j$jobs -f denoise: "
  ms "$halo" run -j"$jobs" "$work/in/shot.####.exr" -f denoise -o "$work/out/{stem}.exr"
  echo -n "  halo --device ref run -j$jobs (copy): "
  ms "$halo" --device ref run -j"$jobs" "$work/in/shot.####.exr" -o "$work/copy/{stem}.exr"
  echo -n "  oiiotool in $jobs processes (copy): "
  ms bash -c "ls '$work'/in/*.exr | xargs -P$jobs -I{} sh -c '\"$oiiotool\" {} -o \"$work/peer/\$(basename {})\"'"
done
"$oiiotool" "$work/in/shot.0001.exr" "$work/copy/shot.0001.exr" --diff | tail -1
