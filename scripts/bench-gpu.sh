#!/usr/bin/env bash
# Runs on the GPU machine from a packed folder (see ../shared/docs/gpu.md):
#   ../shared/scripts/device-pack-cli --build build .gpu build/app/libhalo_oiio.so \
#       build/tests/halo_engine_tests
#   cp scripts/bench-gpu.sh scripts/bench-peers.py scripts/bench-cli.py scripts/bench-table.py \
#      scripts/kernel-resources.py .gpu/
#   cp /usr/share/wallpapers/Altai/contents/images/5120x2880.png .gpu/altai.png   # for cli
#   device run: source .gpu/env.sh && bash .gpu/bench-gpu.sh [tests] [bench] [hist] [sweep]
#               [peers] [hist-peers] [stream] [multi] [cli] [table] [resources]
# table: the README's table from this call's bench and peers results (scripts/bench-table.py).
# cli: the real CLI end to end (scripts/bench-cli.py); HALO_DEVICES="0 all" for the batch on
# one and on every GPU.
# Writes full results under $OUT (or ./bench-out) and prints the tables.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-bench-out}
mkdir -p "$out"
export HALO_CACHE_DIR=${HALO_CACHE_DIR:-/tmp/halo-cache} PYTHONUNBUFFERED=1
steps=${*:-tests bench peers}
for step in $steps; do
  case $step in
    # NVIDIA compiles every radius of the tests anew on a fresh machine (minutes): the output
    # goes to a file as it comes, so a call's time limit still leaves what ran.
    tests) timeout ${HALO_TESTS_S:-400} "$here/bin/halo_engine_tests" --duration=true > "$out/engine-tests.txt" 2>&1
           echo "engine tests rc $?"; tail -3 "$out/engine-tests.txt" ;;
    bench) "$here/bin/halo_bench" --size 7680x4320 --hist-ppi ${HALO_PPI:-16 64 256 auto} --json "$out/halo_bench.json" | tee "$out/halo_bench.txt" ;;
    hist) "$here/bin/halo_bench" --size 7680x4320 --no-filters --hist-ppi ${HALO_PPI:-1 4 16 32 64 128 256 auto} --json "$out/halo_bench_hist.json" | tee "$out/halo_bench_hist.txt" ;;
    sweep)
      # Tuning sweep on 1-channel 8K: fused runs and tile heights, conv runs.
      for t in ${HALO_SWEEP:-rows_steps=4 rows_steps=8 rows_steps=16 rows_h=8 cols_steps=2 cols_steps=8 \
               cols_h=16 cols_w=16 conv_run=4 conv_h=4}; do
        echo "== HALO_TUNING=$t"
        HALO_TUNING=$t "$here/bin/halo_bench" --size 7680x4320 --channels 1 --runs 10 \
          -f sharpen -f gaussian:r=2 -f gaussian:r=8 -f gaussian:r=16 -f box:r=4 -f box:r=32 | tail -6
      done 2>&1 | tee "$out/sweep.txt" ;;
    stream) "$here/bin/halo_bench" --no-filters --no-guided --no-histograms --stream ${HALO_STREAM:-16} --runs 10 --json "$out/stream.json" | tee "$out/stream.txt" ;;
    # The streamed mode on GPU 0 alone, then on every GPU at once (one process each): the
    # device side's scaling with GPUs (nvidia-h200-x2).
    multi)
      gpus=$("$here/bin/halo" devices | grep -c '\[gpu')
      s="$here/bin/halo_bench --no-filters --no-guided --no-histograms --stream ${HALO_STREAM:-16} --runs 10"
      $s --device 0 --json "$out/multi-one.json" > "$out/multi-one.txt" 2>&1
      for ((g = 0; g < gpus; ++g)); do $s --device $g --json "$out/multi-$g.json" > "$out/multi-$g.txt" 2>&1 & done
      wait
      grep -h -A6 "streamed frames" "$out"/multi-*.txt ;;
    cli) python3 "$here/bench-cli.py" --halo "$here/bin/halo" --photo "$here/altai.png" --devices "${HALO_DEVICES:-0}" --jobs ${HALO_JOBS:-16} --json "$out/cli.json" | tee "$out/cli.txt" ;;
    peers) timeout 300 python3 "$here/bench-peers.py" --size 7680x4320 --json "$out/peers.json" | tee "$out/peers.txt" ;;
    table) for ch in 1 3; do python3 "$here/bench-table.py" "$out/halo_bench.json" "$out/peers.json" --channels $ch; echo; done | tee "$out/table.md" ;;
    # Registers, spills, local memory and resident warps of each filter's kernels as the driver
    # compiled them (scripts/kernel-resources.py): one kernel cache per filter keeps them apart.
    resources)
      r=$(mktemp -d) b="$here/bin/halo_bench --runs 1 --warmup 0" dirs=()
      for f in ${HALO_RES_FILTERS:-sharpen gaussian:r=2 gaussian:r=8 gaussian:r=16 gaussian:r=64 box:r=4 box:r=32}; do
        d=$r/${f//[:=]/_}  # the label keeps the spec; kernel-resources.py splits at the last '='
        HALO_CACHE_DIR=$d $b --channels 1 -f $f --no-guided --no-histograms > /dev/null; dirs+=("$f=$d")
      done
      HALO_CACHE_DIR=$r/guided $b --no-filters --no-histograms > /dev/null; dirs+=("guided=$r/guided")
      HALO_CACHE_DIR=$r/hist $b --no-filters --no-guided --hist-method local --hist-ppi auto > /dev/null
      dirs+=("histogram=$r/hist")
      python3 "$here/kernel-resources.py" "${dirs[@]}" --json "$out/resources.json" | tee "$out/resources.txt" ;;
    hist-peers) timeout 300 python3 "$here/bench-peers.py" --size 7680x4320 --histograms-only --json "$out/hist-peers.json" | tee "$out/hist-peers.txt" ;;
  esac
done
