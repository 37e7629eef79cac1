export HALO_CACHE_DIR=/tmp/halo-cache
o=$OUT/all.txt
F="-f sharpen -f emboss -f edge:mode=sobel -f conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25"
for i in 1 2 3; do
  for b in .gpu-old .gpu; do
    echo "== $b run $i" >> $o
    $b/bin/halo_bench --size 7680x4320 --runs 20 --no-histograms --no-guided $F 2>&1 | grep -E "sharpen|emboss|edge|conv" >> $o
  done
done
for t in "vec_conv=8" "vec_w=64,vec_h=2" "vec_w=16,vec_h=8"; do
  echo "== new HALO_TUNING=$t" >> $o
  HALO_TUNING=$t .gpu/bin/halo_bench --size 7680x4320 --runs 20 --no-histograms --no-guided $F 2>&1 | grep -E "sharpen|emboss|edge|conv" >> $o
done
timeout 300 .gpu/bin/halo_engine_tests -tc="*conv*" > $OUT/conv-tests.txt 2>&1; echo "conv tests rc $?" >> $o
