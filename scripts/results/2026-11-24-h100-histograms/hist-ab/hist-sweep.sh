#!/usr/bin/env bash
# Luma RGB8 and grey8 with interleaved copies: loads in flight, group size and ppi.
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
args="--no-filters --no-guided --hist-method local --hist-ppi 64 128 auto --runs 20 --size 7680x4320"
for round in 1 2; do
  for t in hist_subhists=32 hist_subhists=32,hist_in_flight=1 hist_subhists=32,hist_in_flight=4 \
           hist_subhists=32,hist_group=512 hist_subhists=32,hist_group=256 hist_subhists=16,hist_group=512; do
    echo "== round $round $t"
    HALO_TUNING=$t $here/bin/halo_bench $args 2>&1 | grep -E "^(device|rgb8 random|grey8)" | tee -a $out/hist-sweep.txt
  done
done
