"""`halo compare --metrics`: each metric against its published implementation."""
import io
import json
import os

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from oracle import (Mismatch, agree, case, hdr, photo, read_oiio, read_png, to_codes, write_oiio,
                    write_pfm, write_png)


def pairs():
    """Reference and test images as CI meets them: noise, blur, JPEG artefacts, a shifted edge,
    a brighter copy; 8-bit, 16-bit and float; the smallest size SSIM is defined on and odd
    ones."""
    rng = np.random.default_rng(5)
    ref = photo(97, 61, 3, seed=3)
    yield "noise", ref, np.clip(ref + rng.normal(0, 0.05, ref.shape), 0, 1), 8
    blurred = np.asarray(Image.fromarray(to_codes(ref)).resize((48, 30)).resize((97, 61)))
    yield "blur", ref, blurred.astype(np.float32) / 255, 8
    jpeg = io.BytesIO()
    Image.fromarray(to_codes(ref)).save(jpeg, "JPEG", quality=15)
    yield "jpeg", ref, np.asarray(Image.open(jpeg)).astype(np.float32) / 255, 16
    yield "shifted edge", ref, np.roll(ref, 1, axis=1), 8
    edge = np.zeros((11, 11, 1), np.float32)
    edge[:, 5:] = 1
    yield "11x11 edge", edge, np.roll(edge, 1, axis=1), 32
    grey = photo(1023, 517, 1, seed=4)
    yield "1023x517 grey", grey, np.clip(grey * 1.1 + 0.02, 0, 1), 16


@case("metric:ssim", "scikit-image's structural_similarity (gaussian_weights, sigma 1.5, "
      "use_sample_covariance=False, data_range 1), on the values halo reads",
      "1e-7 on the reference (double); 1e-5 on a device (float moments)",
      "scikit-image's default (sample covariance, 7x7 uniform window) is not the paper's; "
      "halo follows the paper's settings, which scikit-image documents as matching Wang et al.")
def ssim(t):
    worst = 0
    for name, a, b, bits in pairs():
        if bits == 32:
            write_pfm(t.path("a.pfm"), a)
            write_pfm(t.path("b.pfm"), b)
            files = [t.path("a.pfm"), t.path("b.pfm")]
            read = [a.astype(np.float64), b.astype(np.float64)]
        else:
            codes = [to_codes(a, bits), to_codes(b, bits)]
            for k, c in enumerate(codes):
                write_png(t.path(f"{'ab'[k]}.png"), c)
            files = [t.path("a.png"), t.path("b.png")]
            read = [c.astype(np.float64) / ((1 << bits) - 1) for c in codes]
        t.halo("compare", *files, "--metrics", "ssim", "--json", t.path("r.json"), expect=1)
        with open(t.path("r.json")) as f:
            got = json.load(f)["pairs"][0]["ssim"]
        settings = dict(gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                        data_range=1.0)
        want = structural_similarity(*read, channel_axis=2, **settings)
        per_channel = [structural_similarity(read[0][..., c], read[1][..., c], **settings)
                       for c in range(read[0].shape[2])]
        names = ["R", "G", "B"] if len(per_channel) == 3 else ["Y"]
        for value, expected, what in [(got["mean"], want, "mean"),
                                      *((got["channels"][n], v, n)
                                        for n, v in zip(names, per_channel))]:
            worst = max(worst, abs(value - expected))
            if abs(value - expected) > (1e-7 if t.device == "ref" else 1e-5):
                raise Mismatch(f"{name}: SSIM {what} {value} vs scikit-image's {expected}")
    return f"max |difference| {worst:.1e}"


def render_pair():
    """A render and a noisier one of it: linear radiance up to 200 with highlights."""
    rng = np.random.default_rng(8)
    ref = hdr(73, 145, 3, seed=9, specials=False)
    ref = np.abs(ref)
    return ref, (ref * np.exp(rng.normal(0, 0.3, ref.shape))).astype(np.float32)


@case("metric:flip", "FLIP and HDR-FLIP in NumPy from the papers and NVIDIA's published "
      "constants (tests/oracle/flip_numpy.py: whole 2D kernels through SciPy, double "
      "precision)", "mean 2e-5; weighted median and quartiles 1e-3; heat map 1 step of 256",
      "a second reading of the papers beside NVIDIA's own figures (flip_nvidia); HDR "
      "exposures leave out NaN and infinite luminances and take the dimmest lit pixel when the "
      "median is 0, where NVIDIA's tool is undefined")
def flip(t):
    import flip_numpy
    from matplotlib import cm
    worst = 0
    rng = np.random.default_rng(6)
    ref = photo(83, 157, 3, seed=7)  # tall enough for two bands of rows
    ldr = [("noise", np.clip(ref + rng.normal(0, 0.05, ref.shape), 0, 1)),
           ("shifted edge", np.roll(ref, 2, axis=0)),
           ("darker", ref * 0.8)]
    for name, test in ldr:
        write_png(t.path("a.png"), to_codes(ref, 16))
        write_png(t.path("b.png"), to_codes(test, 16))
        t.halo("compare", t.path("a.png"), t.path("b.png"), "--metrics", "flip", "--json",
               t.path("r.json"), "--diff-out", t.path("heat.png"), expect=1)
        codes = [to_codes(ref, 16), to_codes(test, 16)]
        linear = [flip_numpy.srgb_to_linear(c.astype(np.float64) / 65535) for c in codes]
        want = flip_numpy.ldr_flip(*linear)
        worst = max(worst, check_flip(t, name, want))
        heat = read_png(t.path("heat.png")).astype(int)
        index = np.floor(want * 255 + 0.5).astype(int) % 256
        magma = np.rint(cm.magma(np.arange(256))[:, :3] * 255).astype(int)
        near = np.minimum.reduce([np.abs(heat - magma[np.clip(index + s, 0, 255)]).max(-1)
                                  for s in (-1, 0, 1)])
        if near.max() > 1:
            raise Mismatch(f"{name}: heat map {near.max()} codes from magma(FLIP)")
    ref_hdr, test_hdr = render_pair()
    write_pfm(t.path("a.pfm"), ref_hdr)
    write_pfm(t.path("b.pfm"), test_hdr)
    t.halo("compare", t.path("a.pfm"), t.path("b.pfm"), "--metrics", "flip", "--json",
           t.path("r.json"), "--flip-exposure-map", t.path("exposure.png"), expect=1)
    want, (start, stop, count), at = flip_numpy.hdr_flip(ref_hdr.astype(np.float64),
                                                        test_hdr.astype(np.float64))
    viridis = np.rint(cm.viridis(np.arange(256))[:, :3] * 255).astype(int)
    index = np.floor(at * 255 + 0.5).astype(int)  # the maps round halves up
    off = np.abs(read_png(t.path("exposure.png")).astype(int) - viridis[index]).max(-1) > 1
    if off.mean() > 0.01:  # exposures whose errors tie within float rounding may swap
        raise Mismatch(f"exposure map: {off.mean():.1%} of pixels name another exposure")
    with open(t.path("r.json")) as f:
        exposures = json.load(f)["pairs"][0]["flip"]["exposures"]
    if exposures["count"] != count or abs(exposures["start"] - start) > 1e-4 or \
            abs(exposures["stop"] - stop) > 1e-4:
        raise Mismatch(f"HDR exposures {exposures}, NumPy's {start}, {stop}, {count}")
    worst = max(worst, check_flip(t, "HDR render", want))
    return f"max |mean difference| {worst:.1e}"


def check_flip(t, name, want):
    import flip_numpy
    with open(t.path("r.json")) as f:
        got = json.load(f)["pairs"][0]["flip"]
    if abs(got["mean"] - want.mean()) > 2e-5:
        raise Mismatch(f"{name}: FLIP mean {got['mean']} vs NumPy's {want.mean()}")
    for key, part in [("q1", 0.25), ("weighted_median", 0.5), ("q3", 0.75)]:
        expected = flip_numpy.weighted_percentile(want, part)
        if abs(got[key] - expected) > 1e-3:
            raise Mismatch(f"{name}: FLIP {key} {got[key]} vs NumPy's {expected}")
    if abs(got["max"] - want.max()) > 1e-3:
        raise Mismatch(f"{name}: FLIP max {got['max']} vs NumPy's {want.max()}")
    return abs(got["mean"] - want.mean())


@case("metric:flip", "NVIDIA's FLIP v1.6 C++ code: its figures and maps for pairs made here "
      "(tests/oracle/nvidia_flip.py; tests/oracle/nvidia-flip/figures.json)",
      "mean 1e-5 (a device: 1e-4); weighted median, quartiles, min and max 1e-4 (a device: "
      "2e-3); HDR exposures 1e-4 and their count equal; heat map within 1 code of NVIDIA's "
      "colour, or its neighbour in the map where the error lies on a boundary (at most 0.1% "
      "of pixels; a device: 1%); exposure map within 1 code",
      "NVIDIA's tool pools the errors in float sums: on a 3840x2160 pair its mean is 7.3e-5 "
      "above the mean of its own per-pixel errors (0.0691439 vs 0.0690711) and its weighted "
      "median 6.5e-4 above; halo sums in double and gives that mean within 3e-8, so halo "
      "follows the definition; where two exposures' errors tie within float rounding the "
      "exposure map may name the other one")
def flip_nvidia(t):
    import nvidia_flip
    from matplotlib import cm
    known = nvidia_flip.figures()
    on_device = t.device != "ref"
    magma = np.rint(cm.magma(np.arange(256))[:, :3] * 255).astype(int)
    viridis = np.rint(cm.viridis(np.arange(256))[:, :3] * 255).astype(int)
    worst = 0
    for name, mode, a, b in nvidia_flip.pairs():
        want = known["pairs"][name]
        if mode == "ldr":
            files = [t.path("a.png"), t.path("b.png")]
            write_png(files[0], a)
            write_png(files[1], b)
        else:
            files = [t.path("a.pfm"), t.path("b.pfm")]
            write_pfm(files[0], a)
            write_pfm(files[1], b)
        maps = os.path.join(nvidia_flip.FIGURES, name)
        extra = ["--flip-exposure-map", t.path("exposure.png")] if mode == "hdr" else []
        t.halo("compare", *files, "--metrics", "flip", "--fail-flip", "0", "--json",
               t.path("r.json"), "--diff-out", t.path("heat.png"), *extra, expect=1)
        with open(t.path("r.json")) as f:
            got = json.load(f)["pairs"][0]["flip"]
        worst = max(worst, abs(got["mean"] - want["mean"]))
        if abs(got["mean"] - want["mean"]) > (1e-4 if on_device else 1e-5):
            raise Mismatch(f"{name}: FLIP mean {got['mean']} vs NVIDIA's {want['mean']}")
        for key in ("weighted_median", "q1", "q3", "min", "max"):
            if abs(got[key] - want[key]) > (2e-3 if on_device else 1e-4):
                raise Mismatch(f"{name}: FLIP {key} {got[key]} vs NVIDIA's {want[key]}")
        if mode == "hdr":
            e = got["exposures"]
            if e["count"] != want["exposures"] or abs(e["start"] - want["start"]) > 1e-4 or \
                    abs(e["stop"] - want["stop"]) > 1e-4:
                raise Mismatch(f"{name}: exposures {e} vs NVIDIA's {want['start']}.."
                               f"{want['stop']} x{want['exposures']}")
        if not os.path.exists(maps + ".heat.png"):
            continue
        index = read_png(maps + ".heat.png")[..., 0].astype(int)
        heat = read_png(t.path("heat.png")).astype(int)
        off = [np.abs(heat - magma[np.clip(index + s, 0, 255)]).max(-1) for s in (0, -1, 1)]
        if np.minimum.reduce(off).max() > 1:
            raise Mismatch(f"{name}: heat map more than one colour from NVIDIA's")
        share = (off[0] > 1).mean()
        if share > (0.01 if on_device else 0.001):
            raise Mismatch(f"{name}: heat map: {share:.2%} of pixels take a neighbouring colour")
        if mode == "hdr":
            index = read_png(maps + ".exposure.png")[..., 0].astype(int)
            exposure = read_png(t.path("exposure.png")).astype(int)
            if np.abs(exposure - viridis[index]).max() > 1:
                raise Mismatch(f"{name}: exposure map differs from NVIDIA's")
    return f"max |mean difference| {worst:.1e} over {len(known['pairs'])} pairs"


def display(x):
    """The display space of the temporal measures for float samples: clip(x, 0, 1)^(1/2.2)."""
    return np.clip(x.astype(np.float64), 0, 1) ** (1 / 2.2)


def warped(previous, mx, my):
    """Bilinear samples of `previous` at (mx, my), edges clamped."""
    h, w = previous.shape[:2]
    fx, fy = np.floor(mx), np.floor(my)
    u, v = (mx - fx)[..., None], (my - fy)[..., None]
    at = lambda x, y: previous[np.clip(y, 0, h - 1).astype(int), np.clip(x, 0, w - 1).astype(int)]
    return ((at(fx, fy) * (1 - u) + at(fx + 1, fy) * u) * (1 - v) +
            (at(fx, fy + 1) * (1 - u) + at(fx + 1, fy + 1) * u) * v)


def warping_error(prev, cur):
    """Lai et al.'s warping error over pixels seen in both frames, from the definitions in
    halo compare's help: Blender's vectors ((x + X, y - Y) in the previous frame), depth within 5%
    and normals within 25 degrees of the nearest pixel there."""
    h, w = cur["rgb"].shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    mx, my = x + cur["vec"][..., 0], y - cur["vec"][..., 1]
    seen = (mx >= 0) & (my >= 0) & (mx <= w - 1) & (my <= h - 1)
    nx = np.clip(np.floor(mx + 0.5), 0, w - 1).astype(int)  # nearest, halves away from zero
    ny = np.clip(np.floor(my + 0.5), 0, h - 1).astype(int)
    z, before = cur["z"].astype(np.float64), prev["z"][ny, nx].astype(np.float64)
    seen &= np.abs(z - before) <= 0.05 * np.minimum(np.abs(z), np.abs(before))
    n, m = cur["n"].astype(np.float64), prev["n"][ny, nx].astype(np.float64)
    seen &= (n * m).sum(-1) >= np.cos(np.radians(25)) * np.sqrt((n * n).sum(-1) * (m * m).sum(-1))
    diff = np.abs(display(cur["rgb"]) - warped(display(prev["rgb"]), mx, my))
    return diff[seen].mean(), int(seen.sum())


def moving_sequence(frames, seed, noise):
    """A textured square sliding over a textured floor by fractional pixels a frame (Blender's
    Vector.X/Y for it, 0 elsewhere), at another depth and facing, so its trailing edge uncovers
    floor; HDR colour (up to 3) and a little noise that changes every frame."""
    rng = np.random.default_rng(seed)
    h, w = 29, 41
    floor, square = photo(w, h, 3, seed=11) * 3, photo(12, 10, 3, seed=12) * 2
    result = []
    for f in range(frames):
        x0 = 6 + 1.7 * f  # the square's left edge, moving right
        rgb, z, n = floor.copy(), np.full((h, w), 10.0), np.tile([0.0, 1.0, 0.0], (h, w, 1))
        vec = np.zeros((h, w, 4))
        ix = int(np.floor(x0))
        rgb[8:18, ix:ix + 12] = square
        z[8:18, ix:ix + 12] = 4.0
        n[8:18, ix:ix + 12] = [0.0, 0.0, 1.0]
        vec[8:18, ix:ix + 12, 0] = -1.7  # to the previous frame: left
        vec[8:18, ix:ix + 12, 2] = -1.7  # to the next: right (x - Z)
        rgb = rgb + rng.normal(0, noise, rgb.shape)
        result.append({"rgb": rgb.astype(np.float32), "z": z.astype(np.float32),
                       "n": n.astype(np.float32), "vec": vec.astype(np.float32)})
    return result


def write_frame(path, frame):
    names = [f"ViewLayer.{c}" for c in ["Combined.R", "Combined.G", "Combined.B", "Depth.Z",
                                          "Normal.X", "Normal.Y", "Normal.Z", "Vector.X",
                                          "Vector.Y", "Vector.Z", "Vector.W"]]
    planes = np.concatenate([frame["rgb"], frame["z"][..., None], frame["n"], frame["vec"]], -1)
    write_oiio(path, planes, names)


@case("metric:temporal", "NumPy from the definitions halo compare states: the temporal error mean "
      "|(a_t - a_t-1) - (b_t - b_t-1)| and Lai et al.'s warping error through Blender's motion "
      "vectors, in display space clip(x, 0, 1)^(1/2.2)",
      "1e-6 (float32 samples summed in double)")
def temporal(t):
    a, b = moving_sequence(5, 1, 0.05), moving_sequence(5, 2, 0.01)
    for k, (fa, fb) in enumerate(zip(a, b), start=1):
        write_frame(t.path(f"a.{k:04d}.exr"), fa)
        write_frame(t.path(f"b.{k:04d}.exr"), fb)
    t.halo("compare", t.path("a.####.exr"), t.path("b.####.exr"), "--metrics", "temporal",
           "--json", t.path("r.json"), expect=1)
    with open(t.path("r.json")) as f:
        got = json.load(f)["temporal"]
    errors, fa, fb = [], [], []
    for k in range(1, 5):
        da = display(a[k]["rgb"]) - display(a[k - 1]["rgb"])
        db = display(b[k]["rgb"]) - display(b[k - 1]["rgb"])
        errors.append(np.abs(da - db).mean())
        fa.append(warping_error(a[k - 1], a[k]))
        fb.append(warping_error(b[k - 1], b[k]))
    for k, step in enumerate(got["steps"]):
        for key, want in [("temporal_error", errors[k]), ("flicker_a", fa[k][0]),
                          ("flicker_b", fb[k][0])]:
            if abs(step[key] - want) > 1e-6:
                raise Mismatch(f"frame {step['frame']} {key}: halo {step[key]:.9g}, "
                               f"NumPy {want:.9g}")
        if (step["pixels_seen_a"], step["pixels_seen_b"]) != (fa[k][1], fb[k][1]):
            raise Mismatch(f"frame {step['frame']}: pixels seen {step['pixels_seen_a']}, "
                           f"{step['pixels_seen_b']}; NumPy {fa[k][1]}, {fb[k][1]}")
    if len(got["steps"]) != 4 or abs(got["temporal_error"] - np.mean(errors)) > 1e-6:
        raise Mismatch(f"temporal error {got['temporal_error']}, NumPy {np.mean(errors)}")
    return (f"4 steps: temporal error {np.mean(errors):.4g}, flicker {np.mean([f[0] for f in fa]):.4g}"
            f" and {np.mean([f[0] for f in fb]):.4g}, {fa[0][1]} of {41 * 29} pixels seen")


def temporal_blend(denoised, frames, t, radius, sigma=0.065, patch=2):
    """denoise:temporal's blend from docs/denoising.md's definition: frame t's denoised colour
    averaged with its neighbours' (weight 1 for t), each followed through Blender's vectors
    (bilinear, positions clamped), where it sees the surface t's 3x3 neighbourhood has (depth
    within [0.95 min, 1.05 max], some normal within cos 0.9), weighted exp(-d / sigma^2), d the
    mean over t's (2 patch + 1)^2 window (inside the image) of the squared difference of
    (v / (1 + v))^(1/2.2) averaged over colour channels."""
    centre = denoised[t].astype(np.float64)
    h, w = centre.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    tone = lambda v: (np.maximum(v, 0) / (1 + np.maximum(v, 0))) ** (1 / 2.2)
    pad = lambda a: np.pad(a, [(1, 1), (1, 1)] + [(0, 0)] * (a.ndim - 2), mode="edge")
    near = lambda a: [pad(a)[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
                      for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    z = frames[t]["z"].astype(np.float64)
    zmin, zmax = np.min(near(z), 0), np.max(near(z), 0)
    n = frames[t]["n"].astype(np.float64)
    total, weight = centre.copy(), np.ones((h, w))
    for step in (-1, 1):
        mx, my = x.copy(), y.copy()
        for k in range(1, radius + 1):
            s = t + step * k
            if not 0 <= s < len(denoised):
                break
            v = frames[s - step]["vec"].astype(np.float64)
            at = warped(v, mx, my)  # the frame stepped from, at the positions so far
            if step < 0:
                mx, my = mx + at[..., 0], my - at[..., 1]
            else:
                mx, my = mx - at[..., 2], my + at[..., 3]
            other = warped(denoised[s].astype(np.float64), mx, my)
            d = ((tone(other) - tone(centre)) ** 2).mean(-1)
            sums, count = np.zeros((h, w)), np.zeros((h, w))
            inside = np.pad(np.ones((h, w)), patch)
            padded = np.pad(d, patch)
            for dy in range(2 * patch + 1):
                for dx in range(2 * patch + 1):
                    sums += padded[dy:dy + h, dx:dx + w]
                    count += inside[dy:dy + h, dx:dx + w]
            mean = sums / count
            qx = np.clip(np.floor(mx + 0.5), 0, w - 1).astype(int)
            qy = np.clip(np.floor(my + 0.5), 0, h - 1).astype(int)
            seen = (mx >= 0) & (my >= 0) & (mx <= w - 1) & (my <= h - 1)
            zs = frames[s]["z"][qy, qx]
            seen &= (zs >= 0.95 * zmin) & (zs <= 1.05 * zmax)
            ns = frames[s]["n"][qy, qx].astype(np.float64)
            ls = np.sqrt((ns * ns).sum(-1))
            best = np.full((h, w), -2.0)
            for m in near(n):
                lt = np.sqrt((m * m).sum(-1))
                both = (ls > 0) & (lt > 0)
                cosine = np.where(both, (ns * m).sum(-1) / np.where(both, ls * lt, 1), -1.0)
                cosine = np.where((ls == 0) & (lt == 0), 1.0, cosine)
                best = np.maximum(best, cosine)
            seen &= best >= 0.9
            wgt = seen * np.exp(-mean / sigma ** 2)
            total += other * wgt[..., None]
            weight += wgt
    return total / weight[..., None]


@case("denoise", "NumPy from the definition of denoise:temporal's blend (docs/denoising.md) over "
      "halo's own per-frame denoise of the same frames (itself checked against OIDN by "
      "tests/denoise/agree.py)", "1e-5 x max(1, |v|) (float32 against float64)")
def denoise_temporal(t):
    frames = moving_sequence(6, 3, 0.2)
    for k, f in enumerate(frames, start=1):
        write_frame(t.path(f"s.{k:04d}.exr"), f)
    rgb = "[ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B]"
    t.halo("run", t.path("s.####.exr") + rgb, "-f", "denoise", "-o", t.path("d.{frame}.exr"), "-q")
    t.halo("run", t.path("s.####.exr") + rgb, "-f", "denoise:temporal=2", "-o",
           t.path("t.{frame}.exr"), "-q")
    names = ["ViewLayer.Combined.R", "ViewLayer.Combined.G", "ViewLayer.Combined.B"]

    def colour(path):
        pixels, channels, _ = read_oiio(path)
        return pixels[..., [channels.index(c) for c in names]]
    denoised = [colour(t.path(f"d.{k:04d}.exr")) for k in range(1, 7)]
    worst = moved = 0.0
    for k in range(6):
        want = temporal_blend(denoised, frames, k, 2)
        got = colour(t.path(f"t.{k + 1:04d}.exr"))
        agree(got, want, 1e-5, f"frame {k + 1}")
        worst = max(worst, float(np.abs(got - want).max()))
        moved = max(moved, float(np.abs(want - denoised[k]).max()))
    return (f"6 frames of 41x29, 2 each side: the blend moved samples by up to {moved:.3g}, "
            f"halo within {worst:.2g} of NumPy")
