export HALO_CACHE_DIR=/tmp/halo-cache
o=$OUT/all.txt
for i in 1 2 3; do
  for t in bilateral_unroll=0 bilateral_unroll=16; do
    echo "== HALO_TUNING=$t run $i" >> $o
    HALO_TUNING=$t .gpu/bin/halo_bench --size 7680x4320 --runs 10 --no-filters --no-histograms 2>&1 | grep -vE "^\s*$" >> $o
  done
done
HALO_TUNING=bilateral_unroll=16 timeout 300 .gpu/bin/halo_engine_tests -tc="*bilateral*" > $OUT/bilateral-tests.txt 2>&1; echo "bilateral tests rc $?" >> $o
tail -3 $OUT/bilateral-tests.txt >> $o
