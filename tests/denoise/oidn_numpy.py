#!/usr/bin/env python3
"""An independent implementation of Intel Open Image Denoise's inference in NumPy: its Tensor
Archive, its U-Net (training/model.py: the default, _small and _large structures) and the
library's input and output processing (core/color.h, core/autoexposure.h,
devices/gpu/gpu_input_process.h, gpu_output_process.h), written from OIDN's sources and sharing
no code with halo. halo's tests compare its `denoise` filter with this.

  oidn_numpy.py WEIGHTS.tza COLOR.pfm OUT.pfm [--albedo A.pfm] [--normal N.pfm]
                [--hdr | --ldr] [--srgb] [--exposure X]
  oidn_numpy.py --prefilter albedo|normal WEIGHTS.tza IN.pfm OUT.pfm

Images are 3-channel PFM files (halo writes and reads them exactly). Needs python3-numpy.
"""
import argparse
import struct
import sys

import numpy as np

F32 = np.float32


# ---- Tensor Archive v2 ----

def read_tza(path):
    data = open(path, "rb").read()
    magic, major, _minor, table = struct.unpack_from("<HBBQ", data, 0)
    if magic != 0x41D7 or major != 2:
        raise SystemExit(f"{path}: not a tensor archive v2")
    (count,) = struct.unpack_from("<I", data, table)
    at = table + 4
    tensors = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<H", data, at)
        at += 2
        name = data[at:at + n].decode()
        at += n
        rank = data[at]
        at += 1
        dims = struct.unpack_from(f"<{rank}I", data, at)
        at += 4 * rank
        at += rank  # layout
        dtype = {"h": np.float16, "f": np.float32}[chr(data[at])]
        at += 1
        (offset,) = struct.unpack_from("<Q", data, at)
        at += 8
        size = int(np.prod(dims))
        tensors[name] = np.frombuffer(data, dtype, size, offset).astype(F32).reshape(dims)
    return tensors


# ---- the U-Net ----

def conv(x, w, b, relu):
    """3x3 convolution, zero padding 1: x (C, H, W), w (O, C, 3, 3)."""
    c, h, wd = x.shape
    p = np.zeros((c, h + 2, wd + 2), F32)
    p[:, 1:-1, 1:-1] = x
    out = np.broadcast_to(b[:, None], (w.shape[0], h * wd)).astype(F32)
    for ky in range(3):
        for kx in range(3):
            out = out + w[:, :, ky, kx] @ p[:, ky:ky + h, kx:kx + wd].reshape(c, h * wd)
    out = out.reshape(w.shape[0], h, wd)
    return np.maximum(out, 0) if relu else out


def pool(x):
    c, h, w = x.shape
    return x.reshape(c, h // 2, 2, w // 2, 2).max(axis=(2, 4))


def upsample(x):
    return x.repeat(2, axis=1).repeat(2, axis=2)


def unet(t, x):
    def c(name, v, relu=True):
        return conv(v, t[name + ".weight"], t[name + ".bias"], relu)

    inp = x
    if "enc_conv1a.weight" in t:  # the _large structure
        x = c("enc_conv1b", c("enc_conv1a", x))
        p1 = x = pool(x)
        x = pool(c("enc_conv2b", c("enc_conv2a", x)))
        p2 = x
        x = pool(c("enc_conv3b", c("enc_conv3a", x)))
        p3 = x
        x = pool(c("enc_conv4b", c("enc_conv4a", x)))
        last = ["dec_conv1a", "dec_conv1b", "dec_conv1c"]
    else:
        x = c("enc_conv0", x)
        p1 = x = pool(c("enc_conv1", x))
        p2 = x = pool(c("enc_conv2", x))
        p3 = x = pool(c("enc_conv3", x))
        x = pool(c("enc_conv4", x))
        last = ["dec_conv1a", "dec_conv1b", "dec_conv0"]
    x = c("enc_conv5b", c("enc_conv5a", x))
    x = c("dec_conv4b", c("dec_conv4a", np.concatenate([upsample(x), p3])))
    x = c("dec_conv3b", c("dec_conv3a", np.concatenate([upsample(x), p2])))
    x = c("dec_conv2b", c("dec_conv2a", np.concatenate([upsample(x), p1])))
    x = c(last[0], np.concatenate([upsample(x), inp]))
    x = c(last[1], x)
    return c(last[2], x, relu=False)


# ---- OIDN's transfer functions and autoexposure ----

PU = dict(a=1.41283765e+03, b=1.64593172e+00, c=4.31384981e-01, d=-2.94139609e-03,
          e=1.92653254e-01, f=6.26026094e-03, g=9.98620152e-01, y0=1.57945760e-06,
          y1=3.22087631e-02, x0=2.23151711e-03, x1=3.70974749e-01)


def pu_forward(y):
    y = y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y <= PU["y0"], PU["a"] * y,
                        np.where(y <= PU["y1"], PU["b"] * np.power(np.maximum(y, 0), PU["c"]) + PU["d"],
                                 PU["e"] * np.log(y + PU["f"]) + PU["g"]))


def pu_inverse(x):
    x = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x <= PU["x0"], x / PU["a"],
                        np.where(x <= PU["x1"], np.power(np.maximum((x - PU["d"]) / PU["b"], 0), 1 / PU["c"]),
                                 np.exp((x - PU["g"]) / PU["e"]) - PU["f"]))


PU_NORM = 1.0 / float(pu_forward(np.array(65504.0)))


def srgb_forward(y):
    return np.where(y <= 0.0031308, 12.92 * y, 1.055 * np.power(np.maximum(y, 0), 1 / 2.4) - 0.055)


def srgb_inverse(x):
    return np.where(x <= 0.04045, x / 12.92, np.power(np.maximum((x + 0.055) / 1.055, 0), 2.4))


def autoexposure(color):
    """OIDN's library: ceil(H/16) x ceil(W/16) bins, bin i over [i*H/n, (i+1)*H/n)."""
    h, w = color.shape[1:]
    # OIDN sanitises: NaN to 0, clamped to [0, FLT_MAX] (+Inf to FLT_MAX).
    c = np.clip(np.where(np.isnan(color), 0, color), 0, np.finfo(F32).max).astype(np.float64)
    lum = 0.212671 * c[0] + 0.715160 * c[1] + 0.072169 * c[2]
    nh, nw = -(-h // 16), -(-w // 16)
    logs = []
    for i in range(nh):
        for j in range(nw):
            b = lum[i * h // nh:(i + 1) * h // nh, j * w // nw:(j + 1) * w // nw].mean()
            if 1e-8 < b < np.finfo(F32).max:  # a bin past float's range: left out, as halo
                logs.append(np.log2(b))
    return 0.18 / 2 ** np.mean(logs) if logs else 1.0


def forward(v, transfer):
    return {"pu": lambda y: pu_forward(y) * PU_NORM, "srgb": srgb_forward,
            "linear": lambda y: y}[transfer](v)


def inverse(v, transfer):
    return {"pu": lambda x: pu_inverse(x / PU_NORM), "srgb": srgb_inverse,
            "linear": lambda x: x}[transfer](v)


def denoise(tensors, main, albedo=None, normal=None, transfer="pu", hdr=True, snorm=False,
            scale=1.0):
    """OIDN's filter on whole images (3, H, W): input processing, padding to 16, the network,
    output processing."""
    h, w = main.shape[1:]
    hp, wp = -(-h // 16) * 16, -(-w // 16) * 16
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.asarray(main, F32) * F32(scale)  # OIDN's order: scaled, NaN to 0, clamped
    v = np.clip(np.where(np.isnan(v), 0, v), -1 if snorm else 0, np.finfo(F32).max if hdr else 1)
    if snorm:
        v = v * 0.5 + 0.5
    planes = [forward(v, transfer)]
    if albedo is not None:
        planes.append(np.clip(np.nan_to_num(albedo, nan=0.0), 0, 1))
    if normal is not None:
        planes.append(np.clip(np.nan_to_num(normal, nan=0.0), -1, 1) * 0.5 + 0.5)
    x = np.zeros((3 * len(planes), hp, wp), F32)
    x[:, :h, :w] = np.concatenate(planes).astype(F32)
    y = unet(tensors, x)[:, :h, :w].astype(np.float64)
    y = inverse(np.maximum(np.nan_to_num(y, nan=0.0), 0), transfer)
    if snorm:
        y = np.maximum(y * 2 - 1, -1)
    if not hdr:
        y = np.minimum(y, 1)
    return (y / scale).astype(F32)


# ---- PFM ----

def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        s = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if s < 0 else ">f4")
    c = 3 if kind == b"PF" else 1
    img = data.reshape(h, w, c)[::-1].astype(F32)
    return np.repeat(img, 3, axis=2).transpose(2, 0, 1) if c == 1 else img.transpose(2, 0, 1)


def write_pfm(path, img):
    h, w = img.shape[1:]
    with open(path, "wb") as f:
        f.write(f"PF\n{w} {h}\n-1.0\n".encode())
        f.write(np.ascontiguousarray(img.transpose(1, 2, 0)[::-1], "<f4").tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--albedo")
    ap.add_argument("--normal")
    ap.add_argument("--ldr", action="store_true", help="LDR colour (default HDR)")
    ap.add_argument("--srgb", action="store_true", help="LDR colour is display-encoded")
    ap.add_argument("--exposure", type=float, help="HDR input scale (default: autoexposure)")
    ap.add_argument("--prefilter", choices=["albedo", "normal"])
    a = ap.parse_args()
    t = read_tza(a.weights)
    img = read_pfm(a.input)
    if a.prefilter == "albedo":
        out = denoise(t, img, transfer="srgb", hdr=False)
    elif a.prefilter == "normal":
        out = denoise(t, img, transfer="linear", hdr=False, snorm=True)
    else:
        hdr = not a.ldr
        transfer = "pu" if hdr else ("linear" if a.srgb else "srgb")
        scale = (a.exposure if a.exposure else autoexposure(img)) if hdr else 1.0
        out = denoise(t, img, read_pfm(a.albedo) if a.albedo else None,
                      read_pfm(a.normal) if a.normal else None, transfer, hdr, False, scale)
    write_pfm(a.output, out)


if __name__ == "__main__":
    sys.exit(main())
