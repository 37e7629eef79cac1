here=$(cd "$(dirname "$0")" && pwd)
export HALO_CACHE_DIR=/tmp/halo-cache
o=$OUT/all.txt
F="-f sharpen -f emboss -f edge:mode=sobel -f conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25"
for i in 1 2; do
  echo "== old run $i" >> $o
  .gpu-old/bin/halo_bench --size 7680x4320 --runs 20 --no-histograms --no-guided $F 2>&1 | grep -E "sharpen|emboss|edge|conv" >> $o
  for t in "vec_conv=4" "vec_conv=2" "vec_conv=3" "vec_conv=8" "vec_conv=2,vec_w=32,vec_h=8" "vec_conv=4,vec_w=32,vec_h=4" "vec_conv=2,conv_vec=2"; do
    echo "== new HALO_TUNING=$t run $i" >> $o
    HALO_TUNING=$t .gpu/bin/halo_bench --size 7680x4320 --runs 20 --no-histograms --no-guided $F 2>&1 | grep -E "sharpen|emboss|edge|conv" >> $o
  done
done
HALO_TUNING=vec_conv=2 timeout 300 .gpu/bin/halo_engine_tests -tc="*conv*" > $OUT/conv-tests.txt 2>&1; echo "conv tests rc $?" >> $o
