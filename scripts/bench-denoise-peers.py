#!/usr/bin/env python3
"""Times OIDN's U-Net in PyTorch, the peer halo's `denoise` is measured against: the same
network (built from the same .tza weights, OIDN's training/model.py structure) on the same
input size, on the CPU or a CUDA GPU, in FP32, TF32, FP16 or BF16, one image per call, in
PyTorch's NCHW layout or channels_last (NHWC, what cuDNN's tensor-core kernels prefer), with
cudnn.benchmark on (cuDNN times its algorithms first and keeps the fastest).

  bench-denoise-peers.py WEIGHTS.tza [--sizes 640x360,1920x1080] [--device cpu|cuda]
                         [--precision fp32,tf32,fp16,bf16] [--layouts nchw,channels_last]
                         [--runs 10] [--threads N] [--json OUT]

Prints, per size, precision and layout, the median of --runs calls after warm-up calls, with the
fastest and slowest (ms). The input is random (9 channels for an _alb_nrm network). Needs
PyTorch (Debian's python3-torch on the CPU; the GPU machine's own).
"""
import argparse
import json
import statistics
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_tza(path):
    data = open(path, "rb").read()
    _magic, _major, _minor, table = struct.unpack_from("<HBBQ", data, 0)
    (count,) = struct.unpack_from("<I", data, table)
    at, tensors = table + 4, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<H", data, at)
        name = data[at + 2:at + 2 + n].decode()
        at += 2 + n
        rank = data[at]
        dims = struct.unpack_from(f"<{rank}I", data, at + 1)
        at += 1 + 4 * rank + rank
        dtype = {"h": np.float16, "f": np.float32}[chr(data[at])]
        (offset,) = struct.unpack_from("<Q", data, at + 1)
        at += 9
        tensors[name] = np.frombuffer(data, dtype, int(np.prod(dims)), offset).astype(np.float32).reshape(dims)
    return tensors


class UNet(torch.nn.Module):
    """OIDN's U-Net (default, _small or _large) with the archive's weights."""

    def __init__(self, tensors):
        super().__init__()
        self.large = "enc_conv1a.weight" in tensors
        self.convs = torch.nn.ModuleDict()
        for name in {k.rsplit(".", 1)[0] for k in tensors}:
            w = torch.from_numpy(tensors[name + ".weight"])
            conv = torch.nn.Conv2d(w.shape[1], w.shape[0], 3, padding=1)
            conv.weight.data.copy_(w)
            conv.bias.data.copy_(torch.from_numpy(tensors[name + ".bias"]))
            self.convs[name] = conv
        self.in_channels = tensors["enc_conv1a.weight" if self.large else "enc_conv0.weight"].shape[1]

    def c(self, name, x, relu=True):
        x = self.convs[name](x)
        return F.relu(x) if relu else x

    def forward(self, inp):
        pool, up = (lambda x: F.max_pool2d(x, 2, 2)), (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"))
        if self.large:
            p1 = pool(self.c("enc_conv1b", self.c("enc_conv1a", inp)))
            p2 = pool(self.c("enc_conv2b", self.c("enc_conv2a", p1)))
            p3 = pool(self.c("enc_conv3b", self.c("enc_conv3a", p2)))
            x = pool(self.c("enc_conv4b", self.c("enc_conv4a", p3)))
            last = ("dec_conv1a", "dec_conv1b", "dec_conv1c")
        else:
            p1 = pool(self.c("enc_conv1", self.c("enc_conv0", inp)))
            p2 = pool(self.c("enc_conv2", p1))
            p3 = pool(self.c("enc_conv3", p2))
            x = pool(self.c("enc_conv4", p3))
            last = ("dec_conv1a", "dec_conv1b", "dec_conv0")
        x = self.c("enc_conv5b", self.c("enc_conv5a", x))
        x = self.c("dec_conv4b", self.c("dec_conv4a", torch.cat((up(x), p3), 1)))
        x = self.c("dec_conv3b", self.c("dec_conv3a", torch.cat((up(x), p2), 1)))
        x = self.c("dec_conv2b", self.c("dec_conv2a", torch.cat((up(x), p1), 1)))
        x = self.c(last[1], self.c(last[0], torch.cat((up(x), inp), 1)))
        return self.c(last[2], x, relu=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights")
    ap.add_argument("--sizes", default="640x360")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--layouts", default="nchw")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: all cores)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    else:
        import os
        torch.set_num_threads(os.cpu_count())
    torch.backends.cudnn.benchmark = True
    net = UNet(read_tza(a.weights)).to(a.device).eval()
    results = []
    for size in a.sizes.split(","):
        w, h = map(int, size.split("x"))
        hp, wp = -(-h // 16) * 16, -(-w // 16) * 16
        x = torch.rand(1, net.in_channels, hp, wp, device=a.device)
        for precision in a.precision.split(","):
            for layout in a.layouts.split(","):
                torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
                dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision, torch.float32)
                fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
                model = net.to(dtype=dtype, memory_format=fmt)
                inp = x.to(dtype=dtype).contiguous(memory_format=fmt)
                times = []
                warmup = 5
                with torch.no_grad():
                    for i in range(a.runs + warmup):
                        if a.device == "cuda":
                            torch.cuda.synchronize()
                        t = time.perf_counter()
                        model(inp)
                        if a.device == "cuda":
                            torch.cuda.synchronize()
                        if i >= warmup:
                            times.append((time.perf_counter() - t) * 1000)
                r = {"size": size, "device": a.device, "precision": precision, "layout": layout,
                     "threads": torch.get_num_threads(), "median_ms": statistics.median(times),
                     "min_ms": min(times), "max_ms": max(times), "runs": a.runs}
                results.append(r)
                print(f"pytorch {torch.__version__} {a.device} {precision} {layout} {size}: median "
                      f"{r['median_ms']:.2f} ms (min {r['min_ms']:.2f}, max {r['max_ms']:.2f}, "
                      f"{a.runs} runs, {r['threads']} threads)")
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
