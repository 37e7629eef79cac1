"""`halo compare --metrics`: each metric against its published implementation."""
import io
import json

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from oracle import Mismatch, case, hdr, photo, read_png, to_codes, write_pfm, write_png


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
      "NVIDIA's tool itself is not run here (its sources are not a Debian package); HDR "
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
