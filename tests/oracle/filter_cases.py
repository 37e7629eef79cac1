"""Oracle cases of the neighbourhood and value filters: OpenCV for the kernels, blurs and rank
filters, ImageMagick for unsharp, OpenImageIO for fixnan and premultiplied alpha, and the NumPy
form of each formula halo documents (`halo filters`) where no library computes it."""
import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from oracle import (Mismatch, agree, agree_codes, case, hdr, kernel_bound, photo, read_any,
                    read_oiio, read_pfm, read_png, to_codes, write_oiio, write_pfm, write_png)

BORDERS = ["zero", "clamp", "reflect", "wrap"]
# NumPy's names for halo's borders (design: reflect is NumPy's 'reflect', OpenCV's REFLECT_101).
NUMPY_PAD = {"zero": "constant", "clamp": "edge", "reflect": "reflect", "wrap": "wrap"}
SIZES = [(1, 1), (7, 5), (37, 23)]


def pad(image, ry, rx, border):
    return np.pad(image, ((ry, ry), (rx, rx), (0, 0)), mode=NUMPY_PAD[border])


def per_channel(image, fn):
    return np.stack([fn(image[..., c]) for c in range(image.shape[2])], axis=-1)


def opencv_padded(image, ry, rx, border, fn):
    """fn (an OpenCV call on one plane) over the image extended by NumPy's border rule, the
    extension cut off again: OpenCV's border handling never decides an edge pixel."""
    padded = pad(image, ry, rx, border)
    h, w = image.shape[:2]
    return per_channel(padded, lambda p: fn(np.ascontiguousarray(p))[ry:ry + h, rx:rx + w])


def correlate(image, kernel, border):
    """sum k[i][j] in(x + j - rx, y + i - ry) in float64, every tap taken (IEEE: 0 x Inf is
    NaN, so a non-finite sample reaches every output whose window holds it)."""
    kh, kw = kernel.shape
    padded = pad(image.astype(np.float64), kh // 2, kw // 2, border)
    windows = sliding_window_view(padded, (kh, kw), axis=(0, 1))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.einsum("yxcij,ij->yxc", windows, kernel.astype(np.float64))


def filter2d(image, kernel, border):
    kh, kw = kernel.shape
    k = kernel.astype(np.float32)
    return opencv_padded(image, kh // 2, kw // 2, border,
                         lambda p: cv2.filter2D(p, cv2.CV_32F, k, borderType=cv2.BORDER_CONSTANT))


def halo_float(t, image, spec, name="out", *extra):
    """`image` as a PFM through `halo run -f spec`, back as float."""
    src = t.path(name + "-in.pfm")
    write_pfm(src, image)
    return read_pfm(t.run(src, spec, name + ".pfm", *extra))


def conv_tolerance(kernel):
    """float32 sums: a rounding of each tap's product at most, 1e-7 x sum |k| (1e-5 at least)."""
    return max(1e-5, 1e-7 * float(np.abs(kernel).sum()))


def kernel_text(kernel):
    return ",".join(f"{v:.9g}" for v in kernel.reshape(-1))


# --- Kernels ---------------------------------------------------------------------------------

@case("conv", "OpenCV filter2D (finite data); NumPy's correlation in float64 (NaN, Inf)",
      "1e-5 x max(1, |v|), 1e-7 x sum(|k|) for large kernels (float32 sums)",
      "OpenCV skips zero taps, so an infinite sample under one gives a finite result; halo "
      "follows the formula as written (IEEE 0 x Inf = NaN), as NumPy does")
def conv_kernels(t):
    rng = np.random.default_rng(3)
    worst = 0
    for (w, h) in SIZES:
        image = photo(w, h, 3, seed=w)
        for border in BORDERS:
            for kh, kw in [(3, 3), (5, 3), (1, 7), (9, 9)]:
                k = rng.normal(0, 1, (kh, kw)).round(3)
                spec = f"conv:k={kernel_text(k)}:w={kw}:h={kh}:scale=1:border={border}"
                got = halo_float(t, image, spec)
                worst = max(worst, agree(got, filter2d(image, k, border), 1e-5, f"{w}x{h} {spec}"))
    return f"largest error {worst:.2g}"


@case("conv", "OpenCV filter2D (finite data); NumPy's correlation in float64 (NaN, Inf)",
      "1e-5 x max(1, |v|), 1e-7 x sum(|k|) for large kernels (float32 sums)",
      "OpenCV skips zero taps, so an infinite sample under one gives a finite result; halo "
      "follows the formula as written (IEEE 0 x Inf = NaN), as NumPy does")
def conv_options(t):
    image = photo(41, 29, 3)
    k = np.arange(1, 10, dtype=np.float64).reshape(3, 3) - 4
    # scale and offset: sum / scale + offset; flip: true convolution.
    got = halo_float(t, image, f"conv:k={kernel_text(k)}:scale=2.5:offset=0.25")
    agree(got, filter2d(image, k / 2.5, "clamp") + 0.25, 1e-5, "scale=2.5:offset=0.25")
    got = halo_float(t, image, f"conv:k={kernel_text(k)}:flip=1:border=reflect")
    agree(got, filter2d(image, k[::-1, ::-1], "reflect") / k.sum(), 1e-5, "flip=1")
    # A rank-1 kernel, as rows then columns and as one 2D pass.
    k1 = np.outer([1, 2, 3, 2, 1], [1, 4, 6, 4, 1]).astype(np.float64)
    for mode in ["auto", "off"]:
        got = halo_float(t, image, f"conv:k={kernel_text(k1)}:separable={mode}")
        agree(got, filter2d(image, k1 / k1.sum(), "clamp"), 1e-5, f"rank 1, separable={mode}")
    # A 31x31 kernel; a kernel summing to 0, whose scale=auto is then 1.
    big = np.random.default_rng(5).normal(0, 1, (31, 31)).round(4)
    got = halo_float(t, image, f"conv:k={kernel_text(big)}:scale=1:border=wrap")
    agree(got, correlate(image, big, "wrap"), conv_tolerance(big), "31x31, wrap")
    zero_sum = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1.0]])
    got = halo_float(t, image, f"conv:k={kernel_text(zero_sum)}")
    agree(got, filter2d(image, zero_sum, "clamp"), 1e-5, "a kernel summing to 0")
    # Non-finite samples reach every output whose window holds them.
    specials = hdr(23, 17, 3)
    got = halo_float(t, specials, f"conv:k={kernel_text(k)}:scale=1:border=zero")
    agree(got, correlate(specials, k, "zero"), 1e-5, "NaN and infinities")


def luminance(image, source_bits):
    """Rec.601 (0.299, 0.587, 0.114) for 8/16-bit data, Rec.709 (0.2126, 0.7152, 0.0722) for
    float, as `halo filters` documents gray=1."""
    weights = [0.299, 0.587, 0.114] if source_bits else [0.2126, 0.7152, 0.0722]
    return (image[..., :3].astype(np.float64) @ np.array(weights))[..., None]


@case(["conv", "emboss", "sharpen", "edge"],
      "OpenCV filter2D and cv2.cvtColor's Rec.601 luma; ITU-R BT.709 weights for float",
      "1e-5 x max(1, |v|)")
def named_kernels(t):
    image = photo(33, 21, 3)
    codes = to_codes(image)
    write_png(t.path("in.png"), codes)
    as_read = codes.astype(np.float32) / 255
    # 8-bit data: Rec.601 luma as OpenCV computes it (cvtColor RGB2GRAY on floats).
    gray601 = cv2.cvtColor(as_read, cv2.COLOR_RGB2GRAY)[..., None]
    agree(luminance(as_read, 8), gray601, 1e-6, "Rec.601 luma weights")
    emboss = np.array([[2, 0, 0], [0, -1, 0], [0, 0, -1]], np.float64)
    got = read_pfm(t.run(t.path("in.png"), "emboss", "emboss.pfm", "--type", "float"))
    agree(got, filter2d(gray601, emboss, "clamp") + 0.5, 1e-5, "emboss on 8-bit RGB")
    got = halo_float(t, image, "emboss")
    agree(got, filter2d(luminance(image, 0).astype(np.float32), emboss, "clamp") + 0.5, 1e-5,
          "emboss on float RGB (Rec.709)")
    for k in [1, 0.5]:
        sharpen = np.full((3, 3), -k)
        sharpen[1, 1] = 8 * k + 1
        got = halo_float(t, image, f"sharpen:k={k}")
        agree(got, filter2d(image, sharpen, "clamp"), 1e-5, f"sharpen:k={k}")
    laplace = -np.ones((3, 3))
    laplace[1, 1] = 8
    got = halo_float(t, image, "edge:border=reflect")
    agree(got, filter2d(image, laplace, "reflect"), 1e-5, "edge (Laplacian)")
    # Sobel: horizontal is d/dy, vertical d/dx, sobel the magnitude (cv2.Sobel, 3x3).
    dy = opencv_padded(image, 1, 1, "clamp", lambda p: cv2.Sobel(p, cv2.CV_32F, 0, 1, ksize=3))
    dx = opencv_padded(image, 1, 1, "clamp", lambda p: cv2.Sobel(p, cv2.CV_32F, 1, 0, ksize=3))
    agree(halo_float(t, image, "edge:mode=horizontal"), dy, 1e-5, "edge:mode=horizontal")
    agree(halo_float(t, image, "edge:mode=vertical"), dx, 1e-5, "edge:mode=vertical")
    agree(halo_float(t, image, "edge:mode=sobel"), np.sqrt(dx * dx + dy * dy), 1e-5,
          "edge:mode=sobel")


@case("sep", "OpenCV sepFilter2D", "1e-5 x max(1, |v|)")
def separable_kernels(t):
    image = photo(45, 31, 3)
    h, v = np.array([1, 4, 6, 4, 1.0]), np.array([-1, 0, 1.0, 2, 5, 2, 1])
    for border in BORDERS:
        got = halo_float(t, image, f"sep:h={kernel_text(h)}:v={kernel_text(v)}:offset=0.1:"
                                   f"border={border}")
        want = opencv_padded(image, 3, 2, border, lambda p: cv2.sepFilter2D(
            p, cv2.CV_32F, h.astype(np.float32), v.astype(np.float32),
            borderType=cv2.BORDER_CONSTANT)) / (h.sum() * v.sum()) + 0.1
        agree(got, want, 1e-5, f"sep border={border}")


@case(["edge", "sep", "conv"],
      "NumPy's correlation, OpenCV's Sobel and sepFilter2D, in float64, on HDR render values "
      "(up to 200)",
      "1e-5 x max(1, |v|), or 2^-23 x sum(|k|) x the largest |input| under the kernel "
      "(float32 sums: what real renders meet)",
      "the error of a float32 sum scales with the inputs under the kernel, not with the "
      "output: a Laplacian over highlights of 29 that cancel to a small value is 1e-5 to "
      "3e-5 from float64, and OpenCV's own float32 as far")
def kernels_on_hdr(t):
    """Highlights (hdr) and a bright plateau of 20..29 whose texture cancels under the kernels
    to outputs near 0: the case the relative tolerance alone cannot state."""
    worst = 0
    for name, image in [("highlights", np.nan_to_num(hdr(61, 37, 3, specials=False))),
                        ("plateau", (20 + 9 * photo(61, 37, 3, seed=4)).astype(np.float32))]:
        laplace = -np.ones((3, 3))
        laplace[1, 1] = 8
        got = halo_float(t, image, "edge:border=reflect")
        worst = max(worst, agree(got, correlate(image, laplace, "reflect"), 1e-5,
                                 f"edge on {name}", bound=kernel_bound(image, 16, 1, 1)))
        wide = image.astype(np.float64)
        dy = opencv_padded(wide, 1, 1, "clamp",
                           lambda p: cv2.Sobel(p, cv2.CV_64F, 0, 1, ksize=3))
        worst = max(worst, agree(halo_float(t, image, "edge:mode=horizontal"), dy, 1e-5,
                                 f"edge:mode=horizontal on {name}",
                                 bound=kernel_bound(image, 8, 1, 1)))
        h, v = np.array([1, 4, 6, 4, 1.0]), np.array([-1, 0, 1.0, 2, 5, 2, 1])
        got = halo_float(t, image, f"sep:h={kernel_text(h)}:v={kernel_text(v)}:scale=1")
        want = opencv_padded(wide, 3, 2, "clamp", lambda p: cv2.sepFilter2D(
            p, cv2.CV_64F, h, v, borderType=cv2.BORDER_CONSTANT))
        bound = kernel_bound(image, np.abs(h).sum() * np.abs(v).sum(), 3, 2)
        worst = max(worst, agree(got, want, 1e-5, f"sep on {name}", bound=bound))
    return f"largest error beyond the sums' bound {worst:.2g}"


# --- Blurs ----------------------------------------------------------------------------------

@case("box", "OpenCV blur (normalised box)", "1e-5 x max(1, |v|)")
def box_blur(t):
    worst = 0
    for (w, h) in SIZES + [(61, 40)]:
        image = photo(w, h, 3, seed=h)
        for border in BORDERS:
            for r in [1, 4, 17, 40]:  # from 17, running sums
                got = halo_float(t, image, f"box:r={r}:border={border}")
                want = opencv_padded(image, r, r, border, lambda p: cv2.blur(
                    p, (2 * r + 1, 2 * r + 1), borderType=cv2.BORDER_CONSTANT))
                worst = max(worst, agree(got, want, 1e-5, f"{w}x{h} box:r={r} {border}"))
    return f"largest error {worst:.2g}"


@case("gaussian", "OpenCV GaussianBlur (its getGaussianKernel weights)", "1e-5 x max(1, |v|)")
def gaussian_blur(t):
    worst = 0
    for (w, h) in SIZES:
        image = photo(w, h, 3, seed=w + h)
        for border in BORDERS:
            for spec, r, sigma in [("r=1", 1, 1 / 3), ("r=8", 8, 8 / 3), ("sigma=2.5", 8, 2.5),
                                   ("r=5:sigma=4", 5, 4.0), ("r=30", 30, 10.0)]:
                got = halo_float(t, image, f"gaussian:{spec}:border={border}")
                want = opencv_padded(image, r, r, border, lambda p: cv2.GaussianBlur(
                    p, (2 * r + 1, 2 * r + 1), sigma, borderType=cv2.BORDER_CONSTANT))
                worst = max(worst, agree(got, want, 1e-5, f"{w}x{h} gaussian:{spec} {border}"))
    return f"largest error {worst:.2g}"


def unsharp_formula(image, blur, amount, threshold):
    detail = image.astype(np.float64) - blur
    return np.where(np.abs(detail) > threshold, image + amount * detail, image)


@case("unsharp", "OpenCV GaussianBlur in the unsharp formula; ImageMagick 6's -gaussian-blur "
      "in the same formula", "1e-5 x max(1, |v|) (OpenCV); 3 codes of 16 bits (ImageMagick)",
      "ImageMagick's own -unsharp blurs with -blur's area-sampled kernel, not a Gaussian's "
      "samples: up to 0.5% from both OpenCV's and its own -gaussian-blur at edges; halo "
      "follows the Gaussian")
def unsharp_mask(t):
    import subprocess
    image = photo(39, 27, 3)
    for spec, sigma, amount, threshold in [("unsharp", 1, 1, 0),
                                           ("unsharp:sigma=2:amount=0.8", 2, 0.8, 0),
                                           ("unsharp:amount=1.5:threshold=0.05", 1, 1.5, 0.05)]:
        r = int(np.ceil(3 * sigma))
        blur = opencv_padded(image, r, r, "clamp", lambda p: cv2.GaussianBlur(
            p, (2 * r + 1, 2 * r + 1), sigma, borderType=cv2.BORDER_CONSTANT))
        agree(halo_float(t, image, spec), unsharp_formula(image, blur, amount, threshold), 1e-5,
              spec)
    # ImageMagick's Gaussian (16-bit) in the formula, against halo's 16-bit output.
    codes = to_codes(image, 16)
    write_png(t.path("in16.png"), codes)
    subprocess.run(["convert", t.path("in16.png"), "-gaussian-blur", "0x1", "-depth", "16",
                    t.path("blur16.png")], check=True)
    blur = read_png(t.path("blur16.png")).astype(np.float64)
    want = np.clip(np.round(unsharp_formula(codes, blur, 1, 0)), 0, 65535)
    # ImageMagick's kernel for sigma 1 at 16 bits reaches 4 pixels (where it falls below 1/65535).
    got = read_png(t.run(t.path("in16.png"), "unsharp:r=4", "halo16.png"))
    return f"{agree_codes(got, want, 3, 'ImageMagick -gaussian-blur 0x1 in the formula')} codes"


# --- Rank filters ------------------------------------------------------------------------------

@case(["median", "dilate", "erode"], "OpenCV medianBlur (8-bit), dilate and erode (float)",
      "exact",
      "OpenCV's morphology pads with +-Inf for its constant border; halo's zero border reads 0, "
      "as NumPy's constant padding")
def rank_filters(t):
    worst = 0
    for (w, h) in SIZES:
        codes = to_codes(photo(w, h, 3, seed=w))
        write_png(t.path("in.png"), codes)
        image = codes.astype(np.float32) / 255
        for border in BORDERS:
            for r in [1, 2, 3]:
                got = read_png(t.run(t.path("in.png"), f"median:r={r}:border={border}", "m.png"))
                want = opencv_padded(codes, r, r, border, lambda p: cv2.medianBlur(p, 2 * r + 1))
                worst = max(worst, agree_codes(got, want, 0, f"{w}x{h} median:r={r} {border}"))
            for r in [1, 9]:
                square = np.ones((2 * r + 1, 2 * r + 1), np.uint8)
                for name, op in [("dilate", cv2.dilate), ("erode", cv2.erode)]:
                    got = halo_float(t, image, f"{name}:r={r}:border={border}")
                    want = opencv_padded(image, r, r, border, lambda p: op(p, square))
                    agree(got, want, 0, f"{w}x{h} {name}:r={r} {border}")
    return "equal"


# --- Values ------------------------------------------------------------------------------------

def srgb_decode(v):
    """IEC 61966-2-1: the sRGB curve, stored value to linear light."""
    v = np.asarray(v, np.float64)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def srgb_encode(v):
    v = np.asarray(v, np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(v <= 0.0031308, v * 12.92, 1.055 * np.abs(v) ** (1 / 2.4) - 0.055)


@case(["linear", "srgb"], "IEC 61966-2-1 (the sRGB curve) in NumPy; OpenColorIO's sRGB",
      "1e-6 (float); exact on 8-bit codes")
def srgb_curves(t):
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=2)
    write_png(t.path("ramp.png"), codes)
    got = read_pfm(t.run(t.path("ramp.png"), "linear", "lin.pfm", "--type", "float"))
    agree(got, srgb_decode(codes / 255.0), 1e-6, "linear on every 8-bit code")
    # Each code back through srgb: the same code.
    back = read_png(t.run(t.path("ramp.png"), ["linear", "srgb"], "back.png"))
    agree_codes(back, codes, 0, "linear then srgb on 8-bit codes")
    image = photo(31, 17, 3)
    got = halo_float(t, image, "srgb:float=1")
    agree(got, srgb_encode(image), 1e-6, "srgb:float=1")
    agree(halo_float(t, image, "linear:float=1"), srgb_decode(image), 1e-6, "linear:float=1")
    # Float data passes unless float=1.
    agree(halo_float(t, image, "srgb"), image, 0, "srgb on float data")


@case(["premultiply", "unpremultiply"], "OpenImageIO's premult and unpremult (oiiotool)",
      "1e-6 x max(1, |v|)",
      "OpenImageIO leaves the colour of a pixel with alpha 0 as it is; halo writes 0 there, "
      "which is what premultiplied colour with alpha 0 must be")
def alpha(t):
    import subprocess
    image = photo(29, 19, 4)
    image[2:5, 3:9, 3] = 0  # fully transparent
    write_oiio(t.path("in.exr"), image)
    subprocess.run(["oiiotool", t.path("in.exr"), "--premult", "-o", t.path("p.exr")], check=True)
    got = read_oiio(t.run(t.path("in.exr"), "premultiply", "hp.exr"))[0]
    agree(got, read_oiio(t.path("p.exr"))[0], 1e-6, "premultiply")
    subprocess.run(["oiiotool", t.path("p.exr"), "--unpremult", "-o", t.path("u.exr")], check=True)
    # A file's premultiplied colour divided by its alpha, and the pair halo puts around
    # filters (alpha is a plane like the colour between them).
    premultiplied = read_oiio(t.path("p.exr"))[0]
    agree(read_oiio(t.run(t.path("p.exr"), ["premultiply", "unpremultiply"], "pair.exr"))[0],
          premultiplied, 1e-6, "premultiply then unpremultiply")
    got = read_oiio(t.run(t.path("p.exr"), "unpremultiply", "hu.exr"))[0]
    want = read_oiio(t.path("u.exr"))[0]
    transparent = want[..., 3] == 0
    want[transparent, :3] = 0
    agree(got, want, 1e-6, "unpremultiply")


@case(["gaussian", "box", "conv", "dilate"],
      "OpenCV's GaussianBlur, blur, filter2D and dilate over all four channels of a float RGBA "
      "EXR (premultiplied colour, as EXR stores it: alpha filtered with the colour)",
      "1e-5 x max(1, |v|)",
      "a float file's alpha is filtered like its colour (oiiotool and Nuke do the same); "
      "8/16-bit files are straight and go through premultiply/unpremultiply instead")
def float_alpha(t):
    """A matte as renders with a transparent film have: HDR colour up to 40 inside soft-edged
    shapes, alpha 0 outside (colour 0 there), sizes no block divides."""
    worst = 0
    for (w, h) in [(61, 37), (128, 67)]:
        yy, xx = np.mgrid[0:h, 0:w]
        alpha = np.clip(1.5 - np.hypot(xx - w * 0.4, yy - h * 0.5) / (0.2 * w), 0, 1)
        image = photo(w, h, 4, seed=w) * 40
        image[..., 3] = alpha
        image[..., :3] *= alpha[..., None]
        write_oiio(t.path("m.exr"), image.astype(np.float32))
        cv = image.astype(np.float32)
        for spec, want in [
                ("gaussian:r=3", cv2.GaussianBlur(cv, (7, 7), 1.0,
                                                  borderType=cv2.BORDER_REPLICATE)),
                ("box:r=2", cv2.blur(cv, (5, 5), borderType=cv2.BORDER_REPLICATE)),
                ("conv:k=1,2,1,2,4,2,1,2,1", cv2.filter2D(
                    cv, -1, np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16,
                    borderType=cv2.BORDER_REPLICATE)),
                ("dilate:r=1", cv2.dilate(cv, np.ones((3, 3), np.uint8),
                                          borderType=cv2.BORDER_REPLICATE))]:
            got = read_oiio(t.run(t.path("m.exr"), spec, "out.exr"))[0]
            worst = max(worst, agree(got, want, 1e-5, f"{w}x{h} RGBA {spec}"))
    return f"largest error {worst:.2g}"


@case(["exposure", "mul", "add", "clamp"], "NumPy forms of the documented formulas",
      "exact (float32 arithmetic)")
def values(t):
    image = hdr(27, 13, 4, specials=True)
    write_oiio(t.path("in.exr"), image)
    cases = [("exposure:stops=-1.5", lambda c: c * np.float32(2 ** -1.5)),
             ("mul:k=1.1,1,0.9", lambda c: c * np.array([1.1, 1, 0.9], np.float32)),
             ("add:k=-0.02", lambda c: c + np.float32(-0.02)),
             ("clamp:min=0.1:max=2", lambda c: np.where(np.isnan(c), c, np.clip(c, 0.1, 2)))]
    for spec, fn in cases:
        got = read_oiio(t.run(t.path("in.exr"), spec, "out.exr"))[0]
        want = image.copy()
        want[..., :3] = fn(image[..., :3]).astype(np.float32)
        agree(got, want, 0, spec)


def fixnan_formula(image, value=0.0):
    """Each non-finite sample: the mean of the finite samples among its 8 neighbours inside the
    image (of its own channel, as the input holds them), else `value`."""
    h, w, _ = image.shape
    finite = np.isfinite(image)
    padded = np.pad(np.where(finite, image, 0).astype(np.float64), ((1, 1), (1, 1), (0, 0)))
    counts = np.pad(finite.astype(np.int64), ((1, 1), (1, 1), (0, 0)))
    sums = sum(padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1)
               for dx in (-1, 0, 1) if dy or dx)
    n = sum(counts[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1)
            for dx in (-1, 0, 1) if dy or dx)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, sums / np.maximum(n, 1), value)
    return np.where(finite, image, mean)


@case("fixnan", "OpenImageIO's fixNonFinite (oiiotool --fixnan box3); NumPy's form of halo's "
      "documented rule", "1e-6 x max(1, |v|)",
      "OpenImageIO fixes samples in place in scan order, so a sample next to an earlier fixed "
      "one averages that fix too; halo (and OpenImageIO's own documentation) averages the "
      "finite samples of the input only: equal where non-finite samples are apart")
def fixnan(t):
    import subprocess
    image = hdr(31, 21, 3, specials=False)
    # Non-finite samples apart from each other (every third pixel at most), for OpenImageIO.
    rng = np.random.default_rng(9)
    apart = np.zeros(image.shape[:2], bool)
    apart[1::3, 1::3] = rng.random(apart[1::3, 1::3].shape) < 0.5
    for k, special in enumerate([np.nan, np.inf, -np.inf]):
        image[apart & (rng.integers(0, 3, apart.shape) == k), k] = special
    write_oiio(t.path("in.exr"), image)
    subprocess.run(["oiiotool", t.path("in.exr"), "--fixnan", "box3", "-o", t.path("o.exr")],
                   check=True)
    agree(read_oiio(t.run(t.path("in.exr"), "fixnan", "h.exr"))[0], read_oiio(t.path("o.exr"))[0],
          1e-6, "fixnan against OpenImageIO")
    # Clusters, and a corner sample with no finite neighbour.
    image[rng.random(image.shape) < 0.1] = np.nan
    image[0:2, 0:2, 0] = np.inf
    write_oiio(t.path("clusters.exr"), image)
    agree(read_oiio(t.run(t.path("clusters.exr"), "fixnan", "c.exr"))[0], fixnan_formula(image),
          1e-6, "fixnan on clusters")
    agree(read_oiio(t.run(t.path("clusters.exr"), "fixnan:value=-1", "c1.exr"))[0],
          fixnan_formula(image, -1.0), 1e-6, "fixnan:value=-1 on clusters")
    want = np.where(np.isfinite(image), image, 0.5)
    agree(read_oiio(t.run(t.path("clusters.exr"), "fixnan:mode=value:value=0.5", "v.exr"))[0],
          want, 0, "fixnan:mode=value:value=0.5")


def aces(v):
    """Narkowicz 2016, on 0.6 v, as `halo filters` documents it: negative values and NaN give
    0, +Inf gives 1 (the fit's saturate())."""
    v = np.nan_to_num(np.asarray(v, np.float64), nan=0.0, posinf=np.finfo(np.float64).max)
    x = np.maximum(v, 0) * 0.6
    with np.errstate(invalid="ignore", over="ignore"):
        r = x * (2.51 * x + 0.03) / (x * (2.43 * x + 0.59) + 0.14)
    return np.minimum(1, np.nan_to_num(r, nan=1.0))


def reinhard(image, white):
    """Reinhard et al. 2002, eq. 4, on Rec.709 luminance, with halo's stated rule: infinities as
    the largest floats, L <= 0 gives 0, a NaN luminance makes the pixel NaN."""
    largest = float(np.finfo(np.float32).max)
    c = np.clip(image.astype(np.float64), -largest, largest)  # NaN stays NaN
    lum = np.minimum(c @ np.array([0.2126, 0.7152, 0.0722]), largest)
    inv_w2 = 1 / white ** 2 if white else 0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ld = lum * (1 + lum * inv_w2) / (1 + lum)
        scale = np.where(lum > 0, ld / lum, np.where(np.isnan(lum), np.nan, 0))
        return c * scale[..., None]


@case("tonemap", "NumPy forms of Narkowicz's ACES fit and Reinhard et al. 2002, eq. 4, with "
      "the stated rules for negative, NaN and infinite samples", "1e-6 x max(1, |v|)")
def tonemap(t):
    image = hdr(25, 15, 3, specials=True)
    image[2, 2] = [np.inf, 1, 1]
    image[3, 3] = [np.nan, 1, 1]
    agree(halo_float(t, image, "tonemap"), aces(image), 1e-6, "tonemap (aces)")
    for white in [None, 4.0]:
        spec = "tonemap:curve=reinhard" + (f":white={white}" if white else "")
        got = halo_float(t, image, spec)
        agree(got, reinhard(image, white), 1e-6, spec)
    # A +Inf red pixel is Reinhard's limit, not NaN in all three channels.
    if not np.isfinite(halo_float(t, image, "tonemap:curve=reinhard")[2, 2]).all():
        raise Mismatch("tonemap:curve=reinhard made +Inf red non-finite")


# --- Histograms ----------------------------------------------------------------------------------

@case("histogram", "NumPy's bincount on the documented bin formulas", "exact (counts)")
def histogram(t):
    import json
    codes = to_codes(photo(53, 37, 3))
    write_png(t.path("in.png"), codes)
    c = codes.astype(np.int64)
    want = {"luma": (299 * c[..., 0] + 587 * c[..., 1] + 114 * c[..., 2]) // 1000,
            "luma709": (2126 * c[..., 0] + 7152 * c[..., 1] + 722 * c[..., 2]) // 10000}
    for mode, v in want.items():
        t.halo("hist", t.path("in.png"), "--mode", mode, "--bins", "256", "--json",
               t.path(mode + ".json"))
        counts = json.load(open(t.path(mode + ".json")))
        got = np.array(counts["counts"][0])
        if not (got == np.bincount(v.reshape(-1), minlength=256)).all():
            raise Mismatch(f"hist --mode {mode}: counts differ")
    return "equal counts"


@case("flatten", "vips flatten (8-bit); NumPy's form of the formula (float, premultiplied)",
      "1 code (vips); 1e-6 (formula)",
      "vips computes in integers and rounds; halo in float, rounded once when written")
def flatten(t):
    import subprocess
    codes = to_codes(photo(45, 29, 4))
    codes[:3, :, 3] = 0
    codes[3:6, :, 3] = 255
    write_png(t.path("in.png"), codes)
    for background in ["0", "255"]:
        subprocess.run(["vips", "flatten", t.path("in.png"), t.path("v.png"), "--background",
                        background], check=True)
        want = read_png(t.path("v.png"))
        got = read_png(t.run(t.path("in.png"), f"flatten:background={int(background) / 255:g}",
                             "h.png"))
        agree_codes(got, want, 1, f"flatten over {background}")
    # Premultiplied colour (an EXR's): c + b (1 - a).
    image = photo(23, 17, 4)
    write_oiio(t.path("in.exr"), image)
    got = read_oiio(t.run(t.path("in.exr"), "flatten:background=0.25,0.5,1", "f.exr"))[0]
    want = image[..., :3] + np.array([0.25, 0.5, 1], np.float32) * (1 - image[..., 3:])
    agree(got, want, 1e-6, "flatten of premultiplied colour")
