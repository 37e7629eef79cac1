#!/usr/bin/env bash
# Histogram layout A/B: the old layout (halo_bench_old) against interleaved copies at 4..32.
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 200 $here/bin/halo_engine_tests -sf="*histogram_test.cpp" > $out/engine-hist.txt 2>&1; echo "hist tests rc $?"; tail -2 $out/engine-hist.txt
args="--no-filters --no-guided --hist-method local --hist-ppi 128 256 auto --runs 20 --size 7680x4320"
for round in 1 2; do
  for v in old new:4 new:8 new:16 new:32; do
    b=$here/bin/halo_bench; t=""
    case $v in old) b=$here/bin/halo_bench_old;; new:*) t="hist_subhists=${v#new:}";; esac
    echo "== round $round $v $t"
    env ${t:+HALO_TUNING=$t} $b $args --json $out/hist-$v-$round.json 2>&1 | grep -E "^(device|rgb8|grey8)" | tee -a $out/hist-ab.txt
  done
done
