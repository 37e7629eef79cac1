"""OpenCV's CPU medianBlur and dilate on the image halo_bench times (5120x2880, 3 channels,
random float32 in [0, 1), and the same as uint8), median of 7 calls after one warm-up."""
import time

import cv2
import numpy as np

rng = np.random.default_rng(1)
img = rng.random((2880, 5120, 3), dtype=np.float32)
img8 = (img * 255).astype(np.uint8)


def timed(label, op):
    ts = []
    for _ in range(8):
        t = time.perf_counter()
        op()
        ts.append(time.perf_counter() - t)
    ts = sorted(ts[1:])
    print(f"{label:34s} {ts[3] * 1e3:8.1f} ms ({ts[0] * 1e3:.1f}..{ts[-1] * 1e3:.1f})")


print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
for k in (3, 5):
    timed(f"medianBlur {k} float32", lambda: cv2.medianBlur(img, k))
    timed(f"medianBlur {k} uint8", lambda: cv2.medianBlur(img8, k))
    element = np.ones((k, k), np.uint8)
    for name, border in (("replicate", cv2.BORDER_REPLICATE), ("reflect101", cv2.BORDER_REFLECT_101)):
        timed(f"dilate {k} {name} float32", lambda: cv2.dilate(img, element, borderType=border))
