"""`halo compare --metrics`: each metric against its published implementation."""
import io
import json

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from oracle import Mismatch, case, photo, to_codes, write_pfm, write_png


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
      "use_sample_covariance=False, data_range 1), on the values halo reads", "1e-7",
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
            if abs(value - expected) > 1e-7:
                raise Mismatch(f"{name}: SSIM {what} {value} vs scikit-image's {expected}")
    return f"max |difference| {worst:.1e}"
