#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-out}; mkdir -p $out
export HALO_CACHE_DIR=/tmp/halo-cache
timeout 300 $here/bin/halo_engine_tests -sf="*strips_test.cpp" > $out/engine-strips.txt 2>&1; echo "engine rc $?"; tail -3 $out/engine-strips.txt
