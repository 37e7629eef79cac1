"""FLIP and HDR-FLIP in NumPy, from the papers (Andersson et al., HPG 2020 and Eurographics
2021) and the constants NVIDIA publishes with them: the 2D contrast-sensitivity and feature
kernels built whole and applied by SciPy's correlate (edges repeated), in double precision.
halo's C++ separates every kernel and streams rows in float; this form shares neither."""
import numpy as np
from scipy import ndimage

QC, PC, PT, W, QF = 0.7, 0.4, 0.95, 0.082, 0.5
WHITE = np.array([0.950428545, 1.0, 1.088900371])
RGB_TO_XYZ = np.array([[10135552 / 24577794, 8788810 / 24577794, 4435075 / 24577794],
                       [2613072 / 12288897, 8788810 / 12288897, 887015 / 12288897],
                       [1425312 / 73733382, 8788810 / 73733382, 70074185 / 73733382]])
XYZ_TO_RGB = np.array([[3.241003275, -1.537398934, -0.498615861],
                       [-0.969224334, 1.875930071, 0.041554224],
                       [0.055639423, -0.204011202, 1.057148933]])
# The tone curves (a c^2 + b c + k) / (d c^2 + e c + f) of the HDR paper.
CURVES = {"aces": (0.6 * 0.6 * 2.51, 0.6 * 0.03, 0.0, 0.6 * 0.6 * 2.43, 0.6 * 0.59, 0.14),
          "hable": (0.231683, 0.013791, 0.0, 0.18, 0.3, 0.018)}
PPD = 0.7 * (3840 / 0.7) * np.pi / 180


def csf_kernels(ppd):
    """The 2D spatial filters of Y, Cx and Cz, each summing to 1: a sqrt(pi/b) exp(-pi^2 r^2/b)
    with r in degrees, Cz the sum of two such terms."""
    radius = int(np.ceil(3 * np.sqrt(0.04 / (2 * np.pi ** 2)) * ppd))
    x = np.arange(-radius, radius + 1) / ppd
    r2 = x[None, :] ** 2 + x[:, None] ** 2
    g = lambda a, b: a * np.sqrt(np.pi / b) * np.exp(-np.pi ** 2 * r2 / b)
    kernels = [g(1, 0.0047), g(1, 0.0053), g(34.1, 0.04) + g(13.5, 0.025)]
    return [k / k.sum() for k in kernels]


def feature_kernels(ppd):
    """Edge (first derivative) and point (second derivative) kernels in x of a Gaussian of
    sigma 0.5 w ppd; positive weights sum to 1, negative ones to -1 (y: transposed)."""
    sd = 0.5 * W * ppd
    radius = int(np.ceil(3 * sd))
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-(x[None, :] ** 2 + x[:, None] ** 2) / (2 * sd * sd))
    out = []
    for k in (-x[None, :] * g, (x[None, :] ** 2 / sd ** 2 - 1) * g):
        k = k.copy()
        k[k > 0] /= k[k > 0].sum()
        k[k < 0] /= -k[k < 0].sum()
        out.append(k)
    return out


def ycxcz(linear):
    xyz = linear @ RGB_TO_XYZ.T / WHITE
    return np.stack([116 * xyz[..., 1] - 16, 500 * (xyz[..., 0] - xyz[..., 1]),
                     200 * (xyz[..., 1] - xyz[..., 2])], -1)


def hunt_lab(linear):
    xyz = linear @ RGB_TO_XYZ.T / WHITE
    d = 6 / 29
    f = np.where(xyz > d ** 3, np.cbrt(xyz), xyz / (3 * d * d) + 4 / 29)
    lab = np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]),
                    200 * (f[..., 1] - f[..., 2])], -1)
    lab[..., 1:] *= 0.01 * lab[..., :1]
    return lab


def hyab(p, q):
    return np.abs(p[..., 0] - q[..., 0]) + np.hypot(p[..., 1] - q[..., 1], p[..., 2] - q[..., 2])


def ldr_flip(ref_linear, test_linear, ppd=PPD):
    """Per-pixel LDR-FLIP of two linear RGB images in [0, 1] (H x W x 3)."""
    filt = lambda plane, k: ndimage.correlate(plane, k, mode="nearest")
    kernels = csf_kernels(ppd)
    edge_x, point_x = feature_kernels(ppd)
    labs, features = [], []
    for image in (ref_linear, test_linear):
        opp = ycxcz(image)
        filtered = np.stack([filt(opp[..., c], kernels[c]) for c in range(3)], -1)
        y = (filtered[..., 0] + 16) / 116
        xyz = np.stack([y + filtered[..., 1] / 500, y, y - filtered[..., 2] / 200], -1) * WHITE
        labs.append(hunt_lab(np.clip(xyz @ XYZ_TO_RGB.T, 0, 1)))
        lum = (opp[..., 0] + 16) / 116
        edge = np.hypot(filt(lum, edge_x), filt(lum, edge_x.T))
        point = np.hypot(filt(lum, point_x), filt(lum, point_x.T))
        features.append((edge, point))
    green, blue = hunt_lab(np.array([0.0, 1, 0])), hunt_lab(np.array([0.0, 0, 1]))
    cmax = hyab(green, blue) ** QC
    pcmax = PC * cmax
    d = hyab(labs[0], labs[1]) ** QC
    colour = np.where(d < pcmax, d * PT / pcmax, PT + (d - pcmax) / (cmax - pcmax) * (1 - PT))
    feature = (np.maximum(np.abs(features[0][0] - features[1][0]),
                          np.abs(features[0][1] - features[1][1])) / np.sqrt(2)) ** QF
    return colour ** (1 - feature)


def srgb_to_linear(v):
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def hdr_flip(ref, test, ppd=PPD, curve="aces"):
    """Per-pixel HDR-FLIP of two linear radiance images (H x W x 3), (start, stop, count), and
    per pixel the exposure (0 first, 1 last) of the largest error."""
    a, b, k, d, e, f = CURVES[curve]
    # The input the tone curve maps to 0.85: the larger root of (a - .85 d) x^2 + ... = 0.
    top = max(np.roots([a - 0.85 * d, b - 0.85 * e, k - 0.85 * f]).real)
    lum = ref @ np.array([0.2126, 0.7152, 0.0722])
    ordered = np.sort(lum.ravel())
    median = ordered[ordered.size // 2]  # the upper middle of an even count, as NVIDIA's tool
    start, stop = np.log2(top / ordered[-1]), np.log2(top / median)
    count = max(2, int(np.ceil(stop - start)))
    tone = lambda c: np.clip((c * c * a + c * b + k) / (c * c * d + c * e + f), 0, 1)
    errors = np.stack([ldr_flip(tone(ref * 2 ** x), tone(test * 2 ** x), ppd)
                       for x in np.linspace(start, stop, count)])
    return errors.max(0), (start, stop, count), errors.argmax(0) / (count - 1)


def weighted_percentile(errors, part):
    ordered = np.sort(errors.ravel())
    running = np.cumsum(ordered)
    return ordered[np.argmax(running > part * running[-1])]
