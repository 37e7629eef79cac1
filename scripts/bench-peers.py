#!/usr/bin/env python3
"""Times halo's peers on the same work as halo_bench: OpenCV's OpenCL path (UMat), CuPy and
PyTorch, on a random float32 image (1 and 3 channels), median of N runs after warm-up.

  python3 scripts/bench-peers.py --size 7680x4320 --json peers.json

Each peer is skipped (with the reason) when it is not installed. Times are wall-clock around
the call plus a device synchronisation for OpenCV, CUDA events for CuPy and PyTorch.
"""
import argparse
import json
import statistics
import time

# (name, kind, radius): the same list as halo_bench's default filters.
WORK = [("conv3x3", "conv", 1), ("gaussian:r=2", "gaussian", 2), ("gaussian:r=8", "gaussian", 8),
        ("gaussian:r=16", "gaussian", 16), ("gaussian:r=64", "gaussian", 64),
        ("box:r=4", "box", 4), ("box:r=32", "box", 32)]


def gauss_taps(np, r):
    sigma = r / 3.0
    x = np.arange(-r, r + 1, dtype=np.float64)
    w = np.exp(-x * x / (2 * sigma * sigma))
    return (w / w.sum()).astype(np.float32)


def opencv(np, img, channels, runs, warmup):
    import cv2
    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.haveOpenCL() or not cv2.ocl.useOpenCL():
        raise RuntimeError("OpenCV has no OpenCL device")
    src = cv2.UMat(img if channels == 1 else np.ascontiguousarray(img.transpose(1, 2, 0)))
    k3 = np.array([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], np.float32)
    out = {}
    for name, kind, r in WORK:
        if kind == "conv":
            op = lambda: cv2.filter2D(src, -1, k3, borderType=cv2.BORDER_REPLICATE)
        elif kind == "gaussian":
            op = lambda: cv2.GaussianBlur(src, (2 * r + 1, 2 * r + 1), r / 3.0,
                                          borderType=cv2.BORDER_REPLICATE)
        else:
            op = lambda: cv2.blur(src, (2 * r + 1, 2 * r + 1), borderType=cv2.BORDER_REPLICATE)
        times = []
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            op()
            cv2.ocl.finish()
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
        out[name] = statistics.median(times)
    return out


def cuda_time(op, sync_event, runs, warmup):
    times = []
    for i in range(warmup + runs):
        start, end = sync_event(), sync_event()
        start.record()
        op()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start_end_ms(start, end))
    return statistics.median(times)


def start_end_ms(start, end):
    try:
        return start.elapsed_time(end)  # torch
    except AttributeError:
        import cupy
        return cupy.cuda.get_elapsed_time(start, end)


def cupy_peer(np, img, channels, runs, warmup):
    import cupy
    import cupyx.scipy.ndimage as ndi
    x = cupy.asarray(img)
    k3 = cupy.asarray([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], dtype=cupy.float32)
    if channels == 3:
        k3 = k3[None]
    out = {}
    for name, kind, r in WORK:
        spatial = (r, r) if channels == 1 else (0, r, r)
        if kind == "conv":
            op = lambda: ndi.correlate(x, k3, mode="nearest")
        elif kind == "gaussian":
            sig = [s / 3.0 for s in spatial]
            op = lambda: ndi.gaussian_filter(x, sig, mode="nearest", truncate=3.0)
        else:
            size = [2 * s + 1 for s in spatial]
            op = lambda: ndi.uniform_filter(x, size, mode="nearest")
        out[name] = cuda_time(op, cupy.cuda.Event, runs, warmup)
    return out


def torch_peer(np, img, channels, runs, warmup):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    x = torch.from_numpy(img.reshape(1, channels, *img.shape[-2:])).cuda()
    out = {}
    k3 = torch.tensor([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], dtype=torch.float32).cuda()
    for name, kind, r in WORK:
        if kind == "conv":
            w = k3.expand(channels, 1, 3, 3).contiguous()
            op = lambda: F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), w, groups=channels)
        else:
            taps = gauss_taps(np, r) if kind == "gaussian" else np.full(2 * r + 1, 1 / (2 * r + 1), np.float32)
            t = torch.from_numpy(taps).cuda()
            wh = t.view(1, 1, 1, -1).expand(channels, 1, 1, 2 * r + 1).contiguous()
            wv = t.view(1, 1, -1, 1).expand(channels, 1, 2 * r + 1, 1).contiguous()
            op = lambda: F.conv2d(F.conv2d(F.pad(x, (r, r, r, r), mode="replicate"), wh, groups=channels),
                                  wv, groups=channels)
        with torch.no_grad():
            out[name] = cuda_time(op, lambda: torch.cuda.Event(enable_timing=True), runs, warmup)
    return out


def histogram_peers(np, width, height, runs, warmup):
    """256-bin histograms of 8-bit grey and the integer luma of RGB8, as halo_bench times them."""
    rng = np.random.default_rng(7)
    grey = rng.integers(0, 256, (height, width), dtype=np.uint8)
    rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    out = []

    def wall(op):
        times = []
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            op()
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    try:
        import cv2
        cv2.ocl.setUseOpenCL(True)
        ug = cv2.UMat(grey)
        out.append(("opencv-ocl", "grey8", wall(lambda: (cv2.calcHist([ug], [0], None, [256], [0, 256]), cv2.ocl.finish()))))
    except Exception as e:
        print(f"opencv histogram: skipped: {e}")
    try:
        import cupy
        g = cupy.asarray(grey)
        c = cupy.asarray(rgb)
        def luma():
            y = (299 * c[..., 0].astype(cupy.uint32) + 587 * c[..., 1].astype(cupy.uint32)
                 + 114 * c[..., 2].astype(cupy.uint32)) // 1000
            return cupy.bincount(y.ravel(), minlength=256)
        out.append(("cupy", "grey8", cuda_time(lambda: cupy.bincount(g.ravel(), minlength=256), cupy.cuda.Event, runs, warmup)))
        out.append(("cupy", "rgb8 luma", cuda_time(luma, cupy.cuda.Event, runs, warmup)))
    except Exception as e:
        print(f"cupy histogram: skipped: {e}")
    out.append(("numpy", "grey8", wall(lambda: np.bincount(grey.ravel(), minlength=256))))
    try:
        from PIL import Image
        im = Image.fromarray(grey)
        out.append(("pillow", "grey8", wall(lambda: im.histogram())))
    except Exception as e:
        print(f"pillow histogram: skipped: {e}")
    return out


def main():
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="7680x4320")
    ap.add_argument("--channels", default="1,3")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--histograms-only", action="store_true", help="skip the filter peers")
    a = ap.parse_args()
    width, height = map(int, a.size.split("x"))
    results = []
    for channels in ([] if a.histograms_only else map(int, a.channels.split(","))):
        rng = np.random.default_rng(1234)
        shape = (height, width) if channels == 1 else (channels, height, width)
        img = rng.random(shape, dtype=np.float32)
        for peer, fn in (("opencv-ocl", opencv), ("cupy", cupy_peer), ("torch", torch_peer)):
            try:
                times = fn(np, img, channels, a.runs, a.warmup)
            except Exception as e:  # a missing peer is reported, not fatal
                print(f"{peer} ({channels} ch): skipped: {e}")
                continue
            for name, ms in times.items():
                results.append({"peer": peer, "filter": name, "channels": channels, "median_ms": ms})
                print(f"{peer:<11} {name:<15} {channels} ch {ms:9.4f} ms", flush=True)
    for peer, name, ms in histogram_peers(np, width, height, a.runs, a.warmup):
        results.append({"peer": peer, "histogram": name, "median_ms": ms})
        print(f"{peer:<11} histogram {name:<10} {ms:9.4f} ms", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size": a.size, "runs": a.runs, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
