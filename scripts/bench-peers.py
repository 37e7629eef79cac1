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


# halo's borders by the names each peer gives them (halo's reflect is OpenCV's REFLECT_101 and
# SciPy's "mirror": the edge pixel is not repeated).
BORDERS = ("reflect", "clamp", "zero")


def opencv(np, img, channels, runs, warmup):
    """Every call of OpenCV's that computes the filter, in each border halo has; a call whose
    OpenCL path does not take the border runs on the CPU, which is detected and labelled."""
    import cv2
    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.haveOpenCL() or not cv2.ocl.useOpenCL():
        raise RuntimeError("OpenCV has no OpenCL device")
    host = img if channels == 1 else np.ascontiguousarray(img.transpose(1, 2, 0))
    src = cv2.UMat(host)
    k3 = np.array([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], np.float32)
    border = {"reflect": cv2.BORDER_REFLECT_101, "clamp": cv2.BORDER_REPLICATE,
              "zero": cv2.BORDER_CONSTANT}
    out = {}
    for name, kind, r in WORK:
        taps = gauss_taps(np, r) if kind == "gaussian" else np.full(2 * r + 1, 1 / (2 * r + 1), np.float32)
        calls = []
        for b in BORDERS:
            bt = border[b]
            if kind == "conv":
                calls.append((f"filter2D {b}", lambda x, bt=bt: cv2.filter2D(x, -1, k3, borderType=bt)))
                continue
            if kind == "gaussian":
                calls.append((f"GaussianBlur {b}", lambda x, bt=bt: cv2.GaussianBlur(
                    x, (2 * r + 1, 2 * r + 1), r / 3.0, borderType=bt)))
            else:
                calls.append((f"blur {b}", lambda x, bt=bt: cv2.blur(x, (2 * r + 1, 2 * r + 1), borderType=bt)))
                calls.append((f"boxFilter {b}", lambda x, bt=bt: cv2.boxFilter(
                    x, -1, (2 * r + 1, 2 * r + 1), normalize=True, borderType=bt)))
            calls.append((f"sepFilter2D {b}", lambda x, bt=bt: cv2.sepFilter2D(x, -1, taps, taps, borderType=bt)))
        out[name] = [opencv_time(cv2, label, op, src, host, runs, warmup) for label, op in calls]
    return out


def opencv_time(cv2, label, op, umat, host, runs, warmup):
    """Wall time of op on the UMat, and whether it ran on the device: OpenCV falls back to its
    CPU code without a word when the OpenCL kernel does not take the arguments. A fallback maps
    the image to the host and runs the CPU code, so a call that takes over half the time of the
    same call on a host array (OpenCL off) is named a fallback. (Busy cores are no sign: on an
    H100 the driver's wait kept more than one core busy during true device calls.)"""
    times, cpu = [], []
    for i in range(warmup + runs):
        c0, t0 = time.process_time(), time.perf_counter()
        op(umat)
        cv2.ocl.finish()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
    cv2.ocl.setUseOpenCL(False)
    cpu_path = []
    for i in range(1):  # only to tell a fallback apart: one run is enough
        t0 = time.perf_counter()
        op(host)
        cpu_path.append((time.perf_counter() - t0) * 1e3)
    cv2.ocl.setUseOpenCL(True)
    ms, cores = statistics.median(times), statistics.median(cpu) / max(statistics.median(times), 1e-9)
    fallback = ms > 0.5 * min(cpu_path)
    return {"call": label, "ms": ms, "spread_ms": [min(times), max(times)],
            "cpu_path_ms": min(cpu_path), "cores_busy": cores, "path": "cpu-fallback" if fallback else "gpu"}


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
    return statistics.median(times), [min(times), max(times)]


def start_end_ms(start, end):
    try:
        return start.elapsed_time(end)  # torch
    except AttributeError:
        import cupy
        return cupy.cuda.get_elapsed_time(start, end)


def cupy_peer(np, img, channels, runs, warmup):
    """cupyx.scipy.ndimage: the n-d call and the per-axis 1-d calls, in each border."""
    import cupy
    import cupyx.scipy.ndimage as ndi
    x = cupy.asarray(img)
    k3 = cupy.asarray([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], dtype=cupy.float32)
    if channels == 3:
        k3 = k3[None]
    mode = {"reflect": "mirror", "clamp": "nearest", "zero": "constant"}
    axes = (-2, -1)
    out = {}
    for name, kind, r in WORK:
        spatial = (r, r) if channels == 1 else (0, r, r)
        taps = cupy.asarray(gauss_taps(np, r))
        calls = []
        for b in BORDERS:
            m = mode[b]
            if kind == "conv":
                calls.append((f"correlate {b}", lambda m=m: ndi.correlate(x, k3, mode=m)))
                continue
            if kind == "gaussian":
                sig = [s / 3.0 for s in spatial]
                calls.append((f"gaussian_filter {b}", lambda m=m, sig=sig: ndi.gaussian_filter(
                    x, sig, mode=m, truncate=3.0)))
                calls.append((f"correlate1d x2 {b}", lambda m=m: ndi.correlate1d(
                    ndi.correlate1d(x, taps, axis=axes[1], mode=m), taps, axis=axes[0], mode=m)))
            else:
                size = [2 * s + 1 for s in spatial]
                calls.append((f"uniform_filter {b}", lambda m=m, size=size: ndi.uniform_filter(x, size, mode=m)))
                calls.append((f"uniform_filter1d x2 {b}", lambda m=m: ndi.uniform_filter1d(
                    ndi.uniform_filter1d(x, 2 * r + 1, axis=axes[1], mode=m), 2 * r + 1, axis=axes[0], mode=m)))
        out[name] = []
        for label, op in calls:
            ms, spread = cuda_time(op, cupy.cuda.Event, runs, warmup)
            out[name].append({"call": label, "ms": ms, "spread_ms": spread, "path": "gpu"})
    return out


def torch_peer(np, img, channels, runs, warmup):
    """torch.nn.functional.conv2d (cuDNN): the zero border inside the convolution, or an explicit
    pad for the others; 2-d kernels separated into a row and a column convolution."""
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    x = torch.from_numpy(img.reshape(1, channels, *img.shape[-2:])).cuda()
    pad_mode = {"reflect": "reflect", "clamp": "replicate"}
    out = {}
    k3 = torch.tensor([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], dtype=torch.float32).cuda()
    for name, kind, r in WORK:
        calls = []
        if kind == "conv":
            w = k3.expand(channels, 1, 3, 3).contiguous()
            calls.append(("conv2d zero", lambda: F.conv2d(x, w, padding=1, groups=channels)))
            for b, pm in pad_mode.items():
                calls.append((f"pad+conv2d {b}", lambda pm=pm: F.conv2d(
                    F.pad(x, (1, 1, 1, 1), mode=pm), w, groups=channels)))
        else:
            taps = gauss_taps(np, r) if kind == "gaussian" else np.full(2 * r + 1, 1 / (2 * r + 1), np.float32)
            t = torch.from_numpy(taps).cuda()
            wh = t.view(1, 1, 1, -1).expand(channels, 1, 1, 2 * r + 1).contiguous()
            wv = t.view(1, 1, -1, 1).expand(channels, 1, 2 * r + 1, 1).contiguous()
            calls.append(("conv2d x2 zero", lambda: F.conv2d(
                F.conv2d(x, wh, padding=(0, r), groups=channels), wv, padding=(r, 0), groups=channels)))
            for b, pm in pad_mode.items():
                calls.append((f"pad+conv2d x2 {b}", lambda pm=pm: F.conv2d(
                    F.conv2d(F.pad(x, (r, r, r, r), mode=pm), wh, groups=channels), wv, groups=channels)))
        out[name] = []
        with torch.no_grad():
            for label, op in calls:
                try:
                    ms, spread = cuda_time(op, lambda: torch.cuda.Event(enable_timing=True), runs, warmup)
                except RuntimeError as e:  # e.g. reflect padding wider than the image
                    print(f"torch {label}: skipped: {e}")
                    continue
                out[name].append({"call": label, "ms": ms, "spread_ms": spread, "path": "gpu"})
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
        out.append(("cupy", "grey8", cuda_time(lambda: cupy.bincount(g.ravel(), minlength=256), cupy.cuda.Event, runs, warmup)[0]))
        out.append(("cupy", "rgb8 luma", cuda_time(luma, cupy.cuda.Event, runs, warmup)[0]))
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


def print_fastest(peer, name, channels, calls):
    """The peer's fastest device call, and its fastest CPU fallback when that is all it has for
    some border."""
    gpu = [c for c in calls if c["path"] == "gpu"]
    best = min(gpu or calls, key=lambda c: c["ms"])
    note = "" if gpu else "  (every call fell back to the CPU)"
    fallbacks = sorted({c["call"] for c in calls if c["path"] != "gpu"})
    if gpu and fallbacks:
        note = "  (CPU fallback: " + ", ".join(fallbacks) + ")"
    print(f"{peer:<11} {name:<15} {channels} ch {best['ms']:9.4f} ms  {best['call']}{note}", flush=True)


def main():
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="7680x4320")
    ap.add_argument("--channels", default="1,3")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--histograms-only", action="store_true", help="skip the filter peers")
    ap.add_argument("--peers", default="opencv-ocl,cupy,torch", help="which filter peers to time")
    a = ap.parse_args()
    wanted = a.peers.split(",")
    width, height = map(int, a.size.split("x"))
    results = []
    for channels in ([] if a.histograms_only else map(int, a.channels.split(","))):
        rng = np.random.default_rng(1234)
        shape = (height, width) if channels == 1 else (channels, height, width)
        img = rng.random(shape, dtype=np.float32)
        for peer, fn in (("opencv-ocl", opencv), ("cupy", cupy_peer), ("torch", torch_peer)):
            if peer not in wanted:
                continue
            try:
                times = fn(np, img, channels, a.runs, a.warmup)
            except Exception as e:  # a missing peer is reported, not fatal
                print(f"{peer} ({channels} ch): skipped: {e}")
                continue
            for name, calls in times.items():
                for c in calls:
                    results.append({"peer": peer, "filter": name, "channels": channels, **c})
                print_fastest(peer, name, channels, calls)
            save(a, results)  # after each peer: a run cut off by a time limit keeps what it did
    for peer, name, ms in histogram_peers(np, width, height, a.runs, a.warmup):
        results.append({"peer": peer, "histogram": name, "median_ms": ms})
        print(f"{peer:<11} histogram {name:<10} {ms:9.4f} ms", flush=True)
    save(a, results)


def save(a, results):
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size": a.size, "runs": a.runs, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
