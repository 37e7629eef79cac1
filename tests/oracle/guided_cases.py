"""Oracle cases of the filters for renders: bilateral and atrous against NumPy forms of the
algorithms `halo filters` documents (discontinuity flags and walks; the edge-avoiding à-trous
passes of Dammertz et al. 2010), written here from that documentation, and denoise against the
independent NumPy implementation of OIDN's network and input process (tests/denoise)."""
import os
import sys

import numpy as np

from oracle import agree, case, read_pfm, write_pfm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "denoise"))
import oidn_numpy as oidn  # noqa: E402

LEFT, RIGHT, TOP, BOTTOM = 1, 2, 4, 8
RENDER = os.path.join(HERE, "..", "data", "render", "close_4spp.exr")


def scene(width, height, seed=6):
    """A render's buffers: two walls and a box in front (normals 90 degrees apart, a depth
    step), a background with no geometry (normal 0), albedo with a texture, noisy colour."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    normal = np.zeros((height, width, 3), np.float32)
    depth = np.full((height, width, 1), 10.0, np.float32)
    left = x < width // 2
    normal[left] = [1, 0, 0]
    normal[~left] = [0, 0, 1]
    box = (abs(x - width * 0.6) < width * 0.15) & (abs(y - height * 0.5) < height * 0.25)
    normal[box] = [0, 1, 0]
    depth[box] = 4.0
    depth[..., 0] += (x * 0.01).astype(np.float32)
    background = y < height // 6
    normal[background] = 0
    albedo = np.where(((x // 4 + y // 4) % 2 == 0)[..., None], 0.7, 0.3) * np.array([1, 0.8, 0.6])
    albedo[box] = [0.01, 0.01, 0.01]  # a metal: nothing to divide by
    clean = albedo * np.where(box, 2.0, 1.0)[..., None] * (0.5 + 0.5 * (normal[..., 2:3] != 0))
    colour = clean * np.exp(rng.normal(0, 0.4, clean.shape))
    return {"colour": colour.astype(np.float32), "normal": normal, "depth": depth,
            "albedo": albedo.astype(np.float32)}


def unit(normal):
    n = normal.astype(np.float32)
    length = np.sqrt((n * n).sum(axis=2, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        u = n / length
    return np.where((length > 0) & np.isfinite(u), u, 0).astype(np.float32)


def geometry(normal, depth):
    is_geo = np.ones(normal.shape[:2], bool)
    if normal is not None:
        is_geo &= (normal != 0).any(axis=2)
    if depth is not None:
        is_geo &= ~np.isnan(depth[..., 0])
    return is_geo


def edges(normal, depth, ya, xa, yb, xb, cos_angle, dz):
    """Whether each pixel and its neighbour across a step differ: bilateral's discontinuity
    test (geometry against none, normals further apart than the angle, depths further apart
    than dz of the nearer)."""
    geo = geometry(normal, depth)
    ga, gb = geo[ya, xa], geo[yb, xb]
    edge = ga != gb
    both = ga & gb
    dot = (normal[ya, xa] * normal[yb, xb]).sum(axis=-1, dtype=np.float32)
    edge |= both & (dot < np.float32(cos_angle))
    za, zb = depth[ya, xa, 0], depth[yb, xb, 0]
    edge |= both & (za != zb) & (np.abs(za - zb) > np.float32(dz) * np.minimum(abs(za), abs(zb)))
    return edge


def flags(normal, depth, cos_angle, dz):
    h, w = normal.shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    f = np.zeros((h, w), np.uint8)
    for bit, dy, dx in [(LEFT, 0, -1), (RIGHT, 0, 1), (TOP, -1, 0), (BOTTOM, 1, 0)]:
        yb, xb = y + dy, x + dx
        inside = (yb >= 0) & (yb < h) & (xb >= 0) & (xb < w)
        e = edges(normal, depth, y, x, np.clip(yb, 0, h - 1), np.clip(xb, 0, w - 1), cos_angle, dz)
        f |= np.where(inside & e, bit, 0).astype(np.uint8)
    return f


def gaussian_half(r, sigma):
    t = np.arange(-r, r + 1)
    g = np.exp(-t * t / (2 * sigma * sigma))
    return (g / g.sum())[r:]


def walk(image, f, weights, horizontal, range_inv):
    """One bilateral pass: from each pixel outwards in both directions along rows (or columns),
    each tap weighted by the Gaussian (times the range kernel), the walk stopped by the flag of
    the pixel it leaves; clamped at the image's edges; divided by the weights used."""
    img = image.astype(np.float64)
    h, w = img.shape[:2]
    n = w if horizontal else h
    pos = np.arange(n)
    total = weights[0] * img
    wsum = np.full((h, w), weights[0])
    for direction, stop in [(-1, LEFT if horizontal else TOP), (1, RIGHT if horizontal else BOTTOM)]:
        alive = np.ones((h, w), bool)
        for i in range(1, len(weights)):
            leave = pos + direction * (i - 1)
            inside = (leave >= 0) & (leave < n)
            leave = np.clip(leave, 0, n - 1)
            fl = f[:, leave] if horizontal else f[leave, :]
            inside_mask = inside[None, :] if horizontal else inside[:, None]
            alive &= ~(inside_mask & ((fl & stop) != 0))
            q = np.clip(pos + direction * i, 0, n - 1)
            tap = img[:, q] if horizontal else img[q, :]
            d2 = ((tap - img) ** 2).sum(axis=2)
            wt = weights[i] * (np.exp(-d2 * range_inv) if range_inv > 0 else 1.0)
            wt = np.where(alive, wt, 0.0)
            total += wt[..., None] * tap
            wsum += wt
    return total / wsum[..., None]


def bilateral(colour, normal, depth, albedo, r, sigma, angle, dz, sigma_r, albedo_min=0.02):
    weights = gaussian_half(r, sigma)
    range_inv = float(np.float32(1 / (2 * sigma_r * sigma_r))) if sigma_r > 0 else 0
    f = (flags(unit(normal), depth, np.cos(np.radians(angle)), dz) if normal is not None
         else np.zeros(colour.shape[:2], np.uint8))
    divide = np.where(albedo >= albedo_min, albedo, 1) if albedo is not None else 1
    rows = walk(colour / divide, f, weights, True, range_inv)
    return walk(rows, f, weights, False, range_inv) * divide


def files(t, buffers):
    for name, image in buffers.items():
        write_pfm(t.path(name + ".pfm"), image)
    return {name: t.path(name + ".pfm") for name in buffers}


@case("bilateral", "NumPy form of halo's documented algorithm (discontinuity flags from normals "
      "and depth, walks stopped at the first flag, the range kernel, albedo demodulation), "
      "written from `halo filters`", "1e-5 x max(1, |v|)",
      "no outside implementation: OpenCV's bilateralFilter is a 2D range filter without guides")
def bilateral_filter(t):
    s = scene(53, 37)
    p = files(t, s)
    guides = f":normal={p['normal']}:depth={p['depth']}:fireflies=0"
    for spec, kwargs in [
            (f"bilateral{guides}:albedo=off:sigma_r=0", dict(r=4, sigma=2, sigma_r=0)),
            (f"bilateral{guides}:albedo=off:r=6:sigma=2.5:angle=30:dz=0.1:sigma_r=0.5",
             dict(r=6, sigma=2.5, angle=30, dz=0.1, sigma_r=0.5)),
            (f"bilateral{guides}:albedo={p['albedo']}:albedo_filter=0:sigma_r=2",
             dict(r=4, sigma=2, sigma_r=2, albedo=True))]:
        want = bilateral(s["colour"], s["normal"], s["depth"],
                         s["albedo"] if kwargs.pop("albedo", False) else None,
                         **{"angle": 40, "dz": 0.05, **kwargs})
        got = read_pfm(t.run(p["colour"], spec + ":border=clamp", "out.pfm"))
        agree(got, want, 1e-5, spec)
    # Self-guided (a photo): the range kernel alone, sigma_r 0.1.
    photo = np.clip(s["colour"] / 2, 0, 1).astype(np.float32)
    write_pfm(t.path("photo.pfm"), photo)
    want = bilateral(photo, None, None, None, r=3, sigma=1.5, angle=40, dz=0.05, sigma_r=0.1)
    agree(read_pfm(t.run(t.path("photo.pfm"), "bilateral:r=3:sigma=1.5", "self.pfm")), want, 1e-5,
          "bilateral without guides")


SPLINE = np.array([1, 4, 6, 4, 1]) / 16


def atrous(colour, normal, depth, iters, sigma_c, falloff, sigma_n, sigma_z):
    """The edge-avoiding à-trous filter as `halo filters atrous` states it: pass i a 5x5 B3
    spline with holes of 2^i pixels (clamped at the edges), colour weight exp(-|dc|^2 /
    sigma^2) with sigma divided by `falloff` each pass, normal weight max(0, n_p.n_q)^sigma_n,
    depth weight exp(-|dz| / (sigma_z * nearer depth)), none across geometry and background."""
    img = colour.astype(np.float64)
    h, w = img.shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    n = unit(normal).astype(np.float64) if normal is not None else None
    geo = geometry(n, depth) if n is not None else None
    for i in range(iters):
        step, inv = 2 ** i, (falloff ** i) ** 2 / sigma_c ** 2
        total, wsum = np.zeros_like(img), np.zeros((h, w))
        for j in range(5):
            for k in range(5):
                qy = np.clip(y + (j - 2) * step, 0, h - 1)
                qx = np.clip(x + (k - 2) * step, 0, w - 1)
                tap = img[qy, qx]
                wt = SPLINE[j] * SPLINE[k] * np.exp(-((tap - img) ** 2).sum(axis=2) * inv)
                if n is not None:
                    gq = geo[qy, qx]
                    dot = np.maximum(0, (n * n[qy, qx]).sum(axis=2))
                    zp, zq = depth[..., 0].astype(np.float64), depth[qy, qx, 0]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        dz = np.where(zp != zq, np.exp(-abs(zp - zq) /
                                                       (sigma_z * np.minimum(abs(zp), abs(zq)))), 1)
                    g = np.where(geo & gq, dot ** sigma_n * dz, np.where(geo == gq, 1.0, 0.0))
                    wt = wt * g
                total += wt[..., None] * tap
                wsum += wt
        img = total / wsum[..., None]
    return img


@case("atrous", "NumPy form of the edge-avoiding à-trous passes as `halo filters` states them "
      "(Dammertz et al. 2010, SVGF's normal weight), written from that documentation",
      "1e-4 x max(1, |v|) (exp2 on the device, exp here)",
      "no outside implementation of this variant; the outline rule and fireflies step are "
      "halo's own (off here)")
def atrous_filter(t):
    s = scene(47, 33)
    p = files(t, s)
    for iters, sigma_c, falloff, sigma_n, sigma_z in [(2, 4.0, 1.0, 32, 0.05), (3, 8.0, 4.0, 48, 0.02)]:
        spec = (f"atrous:iters={iters}:sigma_c={sigma_c}:falloff={falloff}:sigma_n={sigma_n}:"
                f"sigma_z={sigma_z}:outline=0:fireflies=0:albedo=off:normal={p['normal']}:"
                f"depth={p['depth']}")
        want = atrous(s["colour"], s["normal"], s["depth"], iters, sigma_c, falloff, sigma_n,
                      sigma_z)
        agree(read_pfm(t.run(p["colour"], spec, "out.pfm")), want, 1e-4, spec)
    want = atrous(s["colour"], None, None, 2, 1.0, 1.0, 0, 0)
    agree(read_pfm(t.run(p["colour"], "atrous:iters=2:sigma_c=1", "self.pfm")), want, 1e-4,
          "atrous without guides")


@case("denoise", "an independent NumPy implementation of OIDN's network and its input process "
      "(tests/denoise/oidn_numpy.py, from OIDN's published model and sources)",
      "2e-3 x max(1, |v|) beside a +Inf sample (1e-4 elsewhere: the denoise-oidn test)",
      "the full set of networks, guides and devices is the denoise-oidn test; here one crop "
      "with NaN and +Inf samples")
def denoise(t):
    weights = os.path.join(os.path.dirname(os.path.dirname(t.halo_binary)), "share", "halo",
                           "weights", "rt_hdr_alb_nrm.tza")
    layers = {"colour": "ViewLayer.Combined", "albedo": "ViewLayer.DiffCol",
              "normal": "ViewLayer.Normal"}
    planes = {}
    for name, layer in layers.items():
        xyz = "X,Y,Z" if name == "normal" else "R,G,B"
        channels = ",".join(f"{layer}.{c}" for c in xyz.split(","))
        t.halo("run", f"{RENDER}[{channels}]", "-f", "crop:x=150:y=80:w=48:h=32", "-o",
               t.path(name + ".pfm"))
        planes[name] = oidn.read_pfm(t.path(name + ".pfm"))
    planes["colour"][1, 10, 20] = np.inf
    planes["colour"][0, 3, 4] = np.nan
    oidn.write_pfm(t.path("colour.pfm"), planes["colour"])
    want = oidn.denoise(oidn.read_tza(weights), planes["colour"], planes["albedo"],
                        planes["normal"], scale=oidn.autoexposure(planes["colour"]))
    got = read_pfm(t.run(t.path("colour.pfm"), f"denoise:albedo={t.path('albedo.pfm')}:"
                         f"normal={t.path('normal.pfm')}", "out.pfm"))
    # Near the +Inf sample (the largest float after the input process) the activations are far
    # past anything the network was trained on, and float32 sums drift: 7e-4 seen at 8 pixels.
    agree(got, np.moveaxis(want, 0, -1), 2e-3, "denoise with NaN and +Inf samples")
    return "finite, equal to NumPy's"
