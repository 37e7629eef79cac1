#!/usr/bin/env bash
# histogram_local teams (hist_team) A/B on the GPU: 0 (each work-item its own block) vs 8 vs 32.
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 240 $here/bin/halo_engine_tests > $out/engine.txt 2>&1; echo "engine rc $?"; tail -3 $out/engine.txt
args="--no-filters --no-guided --hist-method local --hist-ppi 128 256 auto --runs 20 --size 7680x4320"
for round in 1 2 3; do
  for t in 0 8 32; do
    echo "== round $round hist_team=$t"
    HALO_TUNING=hist_team=$t $here/bin/halo_bench $args --json $out/hist-team$t-$round.json 2>&1 | grep -E "^(rgb8|grey8)" | tee -a $out/hist-team.txt
  done
done
for f in 1 4; do
  echo "== hist_team=32 hist_in_flight=$f"
  HALO_TUNING=hist_team=32,hist_in_flight=$f $here/bin/halo_bench $args 2>&1 | grep -E "^(rgb8|grey8)" | tee -a $out/hist-team.txt
done
