#!/usr/bin/env bash
# `halo compare --metrics flip,ssim` on the GPU machine: an 8K HDR pair (5 runs) and the same pair as
# LDR (3 runs), device times from -v ("ms in kernels", "ms moving rows"), then --verify on a 2K
# pair and the engine's device-against-reference test. Pack first:
#   ../shared/scripts/device-pack-cli --build build .gpu build/tests/halo_engine_tests
#   cp scripts/bench-flip-gpu.sh .gpu/   and run `bash .gpu/bench-flip-gpu.sh` there.
set -u
source .gpu/env.sh
mkdir -p /tmp/flip && cd /tmp/flip
python3 - <<'PY'
import numpy as np
def pfm(path, img):
    h, w, c = img.shape
    with open(path, "wb") as f:
        f.write(f"PF\n{w} {h}\n-1.0\n".encode()); f.write(img[::-1].astype("<f4").tobytes())
rng = np.random.default_rng(1)
for name, (w, h) in {"8k": (7680, 4320), "2k": (1920, 1080)}.items():
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    base = (0.5 + 0.4 * np.sin(x / 37.0) * np.cos(y / 23.0))[..., None] * np.array([1.0, 0.8, 0.6], np.float32)
    ref = (base * 4 * np.exp(rng.normal(0, 0.5, (h, w, 3)))).astype(np.float32)
    test = (ref * np.exp(rng.normal(0, 0.2, (h, w, 3)))).astype(np.float32)
    pfm(f"ref{name}.pfm", ref); pfm(f"test{name}.pfm", test)
PY
H=$OLDPWD/.gpu/bin/halo
cd "$OLDPWD"
for i in 1 2 3 4 5; do
  $H -v --device 0 compare "/tmp/flip/ref8k.pfm" "/tmp/flip/test8k.pfm" --metrics flip --flip-mode hdr --fail-flip 1 2>&1 | grep -E "ms in kernels|HDR-FLIP mean|exposures from"
done
for i in 1 2 3; do
  $H -v --device 0 compare "/tmp/flip/ref8k.pfm" "/tmp/flip/test8k.pfm" --metrics flip --flip-mode ldr --fail-flip 1 2>&1 | grep -E "ms in kernels|FLIP mean"
done
for i in 1 2 3; do  # SSIM: the command's wall time, and the device's from --timings' log
  /usr/bin/time -f "ssim 8k wall %e s" $H -v --device 0 compare "/tmp/flip/ref8k.pfm" "/tmp/flip/test8k.pfm" --metrics ssim --fail-ssim 0 2>&1 | grep -E "SSIM|wall|ssim on"
done
$H --device 0 compare "/tmp/flip/ref2k.pfm" "/tmp/flip/test2k.pfm" --metrics flip,ssim --verify --fail-flip 1 2>&1 | grep -E "verify|FLIP mean|SSIM"
$H --device 0 compare "/tmp/flip/ref2k.pfm" "/tmp/flip/test2k.pfm" --metrics flip --flip-mode ldr --verify --fail-flip 1 2>&1 | grep -E "verify|FLIP mean"
.gpu/bin/halo_engine_tests -tc="flip on the device*,ssim on the device*" 2>&1 | tail -2
rm -rf /tmp/flip
