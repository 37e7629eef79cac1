#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
$here/bin/halo_bench --size 7680x4320 --runs 5 --no-histograms --no-guided -f sharpen -f gaussian:r=8 -f gaussian:r=16 -f box:r=4 -f box:r=32 -f sep:h=1:v=1,2,1 2>&1 | tee $out/bench-check.txt
timeout 420 $here/bin/halo_engine_tests -sf="*separable_test.cpp,*gaussian_test.cpp,*box_test.cpp,*histogram_test.cpp" --duration=true > $out/engine-sep.txt 2>&1; echo "engine rc $?"; grep -E "^\[doctest\]" $out/engine-sep.txt; grep -B2 -A8 "ERROR\|FAILED" $out/engine-sep.txt | head -40
