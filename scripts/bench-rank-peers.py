#!/usr/bin/env python3
"""Times the peers' rank filters on the work halo_bench times with
`-f median median:r=2 dilate erode:r=2 ...`: OpenCV's OpenCL path (UMat medianBlur, dilate,
erode) and CuPy (cupyx.scipy.ndimage median_filter, grey_dilation, grey_erosion), on a random
float32 image of 1 and 3 channels, median of N runs after warm-up, each border halo has.

  python3 scripts/bench-rank-peers.py --size 7680x4320 [--runs 10]

OpenCV's calls that fall back to its CPU code are detected and labelled as scripts/bench-peers.py
does (its opencv_time); a peer that is not installed is skipped with the reason.
"""
import argparse
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench_peers", os.path.join(here, "bench-peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

WORK = [("median", "median", 1), ("median:r=2", "median", 2), ("dilate", "dilate", 1),
        ("dilate:r=2", "dilate", 2), ("erode:r=2", "erode", 2)]


def opencv(np, img, channels, runs, warmup):
    import cv2
    cv2.ocl.setUseOpenCL(True)
    host = img if channels == 1 else np.ascontiguousarray(img.transpose(1, 2, 0))
    src = cv2.UMat(host)
    border = {"reflect": cv2.BORDER_REFLECT_101, "clamp": cv2.BORDER_REPLICATE}
    rows = []
    for name, kind, r in WORK:
        k = 2 * r + 1
        calls = []
        if kind == "median":
            calls.append((f"medianBlur {k}", lambda x, k=k: cv2.medianBlur(x, k)))  # replicate
        else:
            element = np.ones((k, k), np.uint8)
            op = cv2.dilate if kind == "dilate" else cv2.erode
            for b, bt in border.items():
                calls.append((f"{op.__name__} {b}", lambda x, op=op, e=element, bt=bt: op(
                    x, e, borderType=bt)))
        for label, op in calls:
            rows.append((name, peers.opencv_time(cv2, label, op, src, host, runs, warmup)))
    return rows


def cupy_peer(np, img, channels, runs, warmup):
    import cupy
    import cupyx.scipy.ndimage as ndi
    x = cupy.asarray(img)
    rows = []
    for name, kind, r in WORK:
        size = (2 * r + 1,) * 2 if channels == 1 else (1, 2 * r + 1, 2 * r + 1)
        fn = {"median": ndi.median_filter, "dilate": ndi.grey_dilation,
              "erode": ndi.grey_erosion}[kind]
        for b, mode in {"reflect": "mirror", "clamp": "nearest"}.items():
            ms, spread = peers.cuda_time(lambda fn=fn, size=size, mode=mode: fn(
                x, size=size, mode=mode), cupy.cuda.Event, runs, warmup)
            rows.append((name, {"call": f"{fn.__name__} {b}", "ms": ms, "spread_ms": spread,
                                "path": "gpu"}))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="7680x4320")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    import numpy as np
    w, h = map(int, a.size.split("x"))
    rng = np.random.default_rng(1)
    print(f"{'filter':<12} {'ch':>2} {'peer':<8} {'call':<20} {'ms':>9}  spread        path")
    for channels in (1, 3):
        img = rng.random((h, w) if channels == 1 else (3, h, w), dtype=np.float32)
        for peer, fn in (("opencv", opencv), ("cupy", cupy_peer)):
            try:
                for name, t in fn(np, img, channels, a.runs, a.warmup):
                    print(f"{name:<12} {channels:>2} {peer:<8} {t['call']:<20} {t['ms']:9.3f}  "
                          f"{t['spread_ms'][0]:.3f}..{t['spread_ms'][1]:.3f}  {t['path']}")
            except Exception as e:  # a missing or failing peer is reported, not fatal
                print(f"{peer}: skipped ({e})", file=sys.stderr)


if __name__ == "__main__":
    main()
