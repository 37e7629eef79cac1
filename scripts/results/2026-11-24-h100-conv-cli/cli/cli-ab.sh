# The CLI end to end before (.gpu-old: PNG reader with Adler-32, JPEG reader copying) and
# after (.gpu), alternating, on GPU 0.
export HALO_CACHE_DIR=/tmp/halo-cache PYTHONUNBUFFERED=1
o=$OUT/all.txt
nvidia-smi --query-gpu=name --format=csv,noheader >> $o; nproc >> $o
for i in 1 2; do
  for b in .gpu-old .gpu; do
    echo "== $b round $i" >> $o
    python3 .gpu/bench-cli.py --halo $b/bin/halo --photo .gpu/altai.png --runs 3 --devices 0 \
      --json $OUT/cli-${b#.}-$i.json >> $o 2>&1
  done
done
