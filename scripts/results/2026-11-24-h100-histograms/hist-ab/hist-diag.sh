#!/usr/bin/env bash
# Where luma RGB8 time goes: the real kernel (32 interleaved copies), diag1 (loads + luma
# arithmetic, one atomic a block), diag2 (the loads alone, one atomic a block), the old layout.
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
args="--no-filters --no-guided --hist-method local --hist-ppi auto --runs 20 --size 7680x4320"
for round in 1 2 3; do
  for b in halo_bench halo_bench_diag1 halo_bench_diag2 halo_bench_old; do
    echo "== round $round $b"
    $here/bin/$b $args 2>&1 | grep -E "^(device|rgb8|grey8)" | tee -a $out/hist-diag.txt
  done
done
