#!/usr/bin/env python3
"""Train LeNet-5 on Fashion-MNIST and export float32 + int8 weights for directgraph.

Usage:
    python3 tools/train_lenet.py [--out examples/lenet-weights]
                                 [--data /usr/share/datasets/fashion-mnist]
                                 [--epochs N] [--seed S]

Requirements: python3-torch, python3-numpy (Debian), dataset-fashion-mnist
(Debian package, IDX gzip files).  No network access, no torchvision.

Network (NCHW, float32), input x = pixel / 255 (shape [N,1,28,28]):
    conv1 6x5x5 pad 2 -> relu -> maxpool 2x2/2     -> [6,14,14]
    conv2 16x5x5 pad 0 -> relu -> maxpool 2x2/2    -> [16,5,5]
    flatten (C,H,W) -> fc1 400->120 relu -> fc2 120->84 relu -> fc3 84->10
    (fc3 output = logits; softmax is applied by the C program)

Int8 post-training quantisation (ONNX QLinearConv / QLinearMatMul semantics):
    activations: signed int8, asymmetric, real = (q - zp) * scale
    weights:     int8, symmetric per output channel, zp = 0,
                 scale[c] = max|w_c| / 127, q = clip(rint(w / scale[c]), -127, 127)
    bias:        int32, round(b[c] / (s_x * s_w[c]))
    requant:     acc = sum((x - zx) * (w - zw)) + bias              (int32)
                 m   = float32(s_x * s_w[c]) / float32(s_y)         (float32 ops)
                 y   = clamp(rint_half_even(float32(acc) * m) + zy, lo, 127)
                 lo  = zy for fused relu layers, else -128
    max pooling is performed directly on int8 values.
The script contains a numpy emulation of exactly this pipeline and reports
its test accuracy.
"""

import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LAYERS = ["conv1", "conv2", "fc1", "fc2", "fc3"]


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError("%s: unsupported IDX header" % path)
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return arr.reshape(dims)


def find_file(data_dir, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(data_dir, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError("%s(.gz) not found in %s" % (stem, data_dir))


def load_fashion_mnist(data_dir):
    files = {
        "train_x": "train-images-idx3-ubyte",
        "train_y": "train-labels-idx1-ubyte",
        "test_x": "t10k-images-idx3-ubyte",
        "test_y": "t10k-labels-idx1-ubyte",
    }
    out = {}
    for key, stem in files.items():
        path = find_file(data_dir, stem)
        print("reading %s" % path)
        out[key] = read_idx(path)
    assert out["train_x"].shape == (60000, 28, 28)
    assert out["test_x"].shape == (10000, 28, 28)
    return out


def preprocess(images_u8):
    """uint8 [N,28,28] -> float32 [N,1,28,28], x = pixel / 255."""
    return (images_u8.astype(np.float32) / np.float32(255.0))[:, None, :, :]


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------
class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x, return_acts=False):
        a1 = F.relu(self.conv1(x))
        p1 = F.max_pool2d(a1, 2, 2)
        a2 = F.relu(self.conv2(p1))
        p2 = F.max_pool2d(a2, 2, 2)
        f = p2.flatten(1)
        a3 = F.relu(self.fc1(f))
        a4 = F.relu(self.fc2(a3))
        y = self.fc3(a4)
        if return_acts:
            return {"conv1": a1, "conv2": a2, "fc1": a3, "fc2": a4, "fc3": y}
        return y


def evaluate_f32(model, x, y, bs=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), bs):
            logits = model(torch.from_numpy(x[i:i + bs]))
            correct += int((logits.argmax(1).numpy() == y[i:i + bs]).sum())
    return correct / len(x)


def train(model, data, epochs, seed, lr, batch):
    x_train = preprocess(data["train_x"])
    y_train = data["train_y"].astype(np.int64)
    x_test = preprocess(data["test_x"])
    y_test = data["test_y"].astype(np.int64)

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = (len(x_train) + batch - 1) // batch
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr, epochs=epochs, steps_per_epoch=steps_per_epoch,
        pct_start=0.2)
    xt = torch.from_numpy(x_train)
    yt = torch.from_numpy(y_train)
    for ep in range(epochs):
        model.train()
        t0 = time.time()
        perm = torch.randperm(len(xt), generator=gen)
        tot_loss = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            xb = xt[idx]
            # augmentation: random horizontal flip (garments are ~symmetric)
            flip = torch.rand(len(idx), generator=gen) < 0.5
            xb = torch.where(flip[:, None, None, None], xb.flip(3), xb)
            yb = yt[idx]
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            tot_loss += float(loss) * len(idx)
        acc = evaluate_f32(model, x_test, y_test)
        print("epoch %2d  loss %.4f  test_acc %.4f  (%.1fs)"
              % (ep + 1, tot_loss / len(xt), acc, time.time() - t0), flush=True)
    return model


# --------------------------------------------------------------------------
# quantisation
# --------------------------------------------------------------------------
def act_qparams(rmin, rmax):
    """Asymmetric signed int8 (scale, zero_point); range always contains 0."""
    rmin = min(float(rmin), 0.0)
    rmax = max(float(rmax), 0.0)
    if rmax - rmin <= 0:
        return np.float32(1.0), -128
    scale = np.float32((rmax - rmin) / 255.0)
    zp = int(np.clip(np.rint(-128.0 - rmin / float(scale)), -128, 127))
    return scale, zp


def quantize_weights(w):
    """Symmetric per-output-channel int8; w: float32 [out, ...]."""
    flat = w.reshape(w.shape[0], -1)
    amax = np.abs(flat).max(axis=1)
    scale = (amax / 127.0).astype(np.float32)
    scale[scale == 0] = np.float32(1.0)
    q = np.clip(np.rint(flat / scale[:, None]), -127, 127).astype(np.int8)
    return q.reshape(w.shape), scale


def calibrate(model, x_calib, percentile):
    """Output (scale, zp) per layer from float activations (post-relu)."""
    model.eval()
    with torch.no_grad():
        acts = model(torch.from_numpy(x_calib), return_acts=True)
    qp = {}
    for name in LAYERS:
        a = acts[name].numpy().ravel().astype(np.float64)
        if percentile >= 100.0:
            lo, hi = a.min(), a.max()
        else:
            lo = np.percentile(a, 100.0 - percentile)
            hi = np.percentile(a, percentile)
        qp[name] = act_qparams(lo, hi)
    return qp


def build_qmodel(model, qp, in_qp):
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    q = {"input": in_qp}
    s_x = in_qp[0]
    for name in LAYERS:
        w = sd[name + ".weight"]
        b = sd[name + ".bias"]
        wq, ws = quantize_weights(w)
        bq = np.rint(b.astype(np.float64) /
                     (np.float64(s_x) * ws.astype(np.float64)))
        assert np.all(np.abs(bq) < 2**31 - 1)
        q[name] = {
            "wq": wq, "wscale": ws, "bq": bq.astype(np.int32),
            "s_x": np.float32(s_x), "s_y": np.float32(qp[name][0]),
            "zy": int(qp[name][1]),
        }
        s_x = qp[name][0]
    return q


def requant(acc, s_x, ws, s_y, zy, relu):
    """acc int64 [N, C, ...] (channel axis 1) -> int8, float32 arithmetic."""
    m = (np.float32(s_x) * ws.astype(np.float32)) / np.float32(s_y)  # float32
    assert m.dtype == np.float32
    assert np.all(np.abs(acc) <= 2**31 - 1), "int32 accumulator overflow"
    shape = [1, -1] + [1] * (acc.ndim - 2)
    v = acc.astype(np.int32).astype(np.float32) * m.reshape(shape)
    assert v.dtype == np.float32
    y = np.rint(v).astype(np.int64) + zy
    lo = zy if relu else -128
    return np.clip(y, lo, 127).astype(np.int8)


def im2col(x, k, pad, pad_value):
    """x int [N,C,H,W] -> [N, C*k*k, Ho*Wo] (float64, exact for ints)."""
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                   constant_values=pad_value)
    n, c, h, w = x.shape
    ho, wo = h - k + 1, w - k + 1
    cols = np.empty((n, c, k, k, ho, wo), dtype=np.float64)
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = x[:, :, i:i + ho, j:j + wo]
    return cols.reshape(n, c * k * k, ho * wo), ho, wo


def qconv(xq, zx, L, pad, relu):
    """QLinearConv; padding uses the input zero point (= real 0)."""
    x = xq.astype(np.int64) - zx                    # padding value becomes 0
    cols, ho, wo = im2col(x, 5, pad, 0)
    w = L["wq"].reshape(L["wq"].shape[0], -1).astype(np.float64)   # zw = 0
    acc = np.einsum("ok,nkp->nop", w, cols, optimize=True)
    acc = np.rint(acc).astype(np.int64) + L["bq"].astype(np.int64)[None, :, None]
    acc = acc.reshape(acc.shape[0], -1, ho, wo)
    return requant(acc, L["s_x"], L["wscale"], L["s_y"], L["zy"], relu)


def qfc(xq, zx, L, relu):
    """QLinearMatMul + bias; x [N, in], W [out, in]."""
    x = (xq.astype(np.int64) - zx).astype(np.float64)
    acc = np.rint(x @ L["wq"].astype(np.float64).T).astype(np.int64)
    acc = acc + L["bq"].astype(np.int64)[None, :]
    return requant(acc, L["s_x"], L["wscale"], L["s_y"], L["zy"], relu)


def maxpool_int8(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def quantize_input(x, in_qp):
    s, zp = in_qp
    return np.clip(np.rint(x / np.float32(s)) + zp, -128, 127).astype(np.int8)


def run_int8(q, x_f32):
    """Full int8 pipeline; returns dequantised fc3 logits (float32) and int8 out."""
    zx = q["input"][1]
    h = quantize_input(x_f32, q["input"])
    h = maxpool_int8(qconv(h, zx, q["conv1"], 2, True))
    h = maxpool_int8(qconv(h, q["conv1"]["zy"], q["conv2"], 0, True))
    h = h.reshape(h.shape[0], -1)                   # C,H,W order
    h = qfc(h, q["conv2"]["zy"], q["fc1"], True)
    h = qfc(h, q["fc1"]["zy"], q["fc2"], True)
    yq = qfc(h, q["fc2"]["zy"], q["fc3"], False)
    L = q["fc3"]
    y = (yq.astype(np.float32) - np.float32(L["zy"])) * np.float32(L["s_y"])
    return y, yq


def evaluate_int8(q, x, y, bs=1000):
    correct = 0
    for i in range(0, len(x), bs):
        logits, _ = run_int8(q, x[i:i + bs])
        correct += int((logits.argmax(1) == y[i:i + bs]).sum())
    return correct / len(x)


# --------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------
def save(out, name, arr, dtype):
    arr = np.ascontiguousarray(np.asarray(arr).astype(np.dtype(dtype).newbyteorder("<")))
    np.save(os.path.join(out, name + ".npy"), arr)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="examples/lenet-weights")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--calib", type=int, default=1000,
                    help="number of training images used for int8 calibration")
    args = ap.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)

    data = load_fashion_mnist(args.data)
    x_test = preprocess(data["test_x"])
    y_test = data["test_y"].astype(np.int64)

    model = LeNet5()
    t0 = time.time()
    train(model, data, args.epochs, args.seed, args.lr, args.batch)
    train_time = time.time() - t0
    model.eval()
    f32_acc = evaluate_f32(model, x_test, y_test)
    print("training time %.1fs, f32 test accuracy %.4f" % (train_time, f32_acc))

    # ---- int8 PTQ, calibrated on the first `calib` training images -----------
    x_calib = preprocess(data["train_x"][:args.calib])
    in_qp = act_qparams(0.0, 1.0)       # x in [0,1] -> scale 1/255, zp -128
    best = None
    for pct in (100.0, 99.999, 99.99, 99.9):
        qp = calibrate(model, x_calib, pct)
        q = build_qmodel(model, qp, in_qp)
        # choose the calibration percentile on the calibration set itself
        calib_acc = evaluate_int8(q, x_calib, data["train_y"][:args.calib])
        print("calibration percentile %-7g calib-set int8 acc %.4f" % (pct, calib_acc))
        if best is None or calib_acc > best[0]:
            best = (calib_acc, pct, q)
    _, pct, q = best
    int8_acc = evaluate_int8(q, x_test, y_test)
    print("chosen percentile %g: int8 (emulated) test accuracy %.4f" % (pct, int8_acc))
    for name in ["input"] + LAYERS:
        qq = q[name] if name == "input" else (q[name]["s_y"], q[name]["zy"])
        print("  %-6s out scale %.6g zp %d" % (name, qq[0], qq[1]))
    if abs(f32_acc - int8_acc) > 0.015:
        print("WARNING: int8 accuracy differs from f32 by more than 1.5 points",
              file=sys.stderr)

    # ---- export --------------------------------------------------------------
    os.makedirs(args.out, exist_ok=True)
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name in LAYERS:
        save(args.out, name + "_w", sd[name + ".weight"], np.float32)
        save(args.out, name + "_b", sd[name + ".bias"], np.float32)
        L = q[name]
        save(args.out, name + "_wq", L["wq"], np.int8)
        save(args.out, name + "_wscale", L["wscale"], np.float32)
        save(args.out, name + "_bq", L["bq"], np.int32)
        save(args.out, name + "_yq", [L["s_y"], L["zy"]], np.float32)
    save(args.out, "q_input", [in_qp[0], in_qp[1]], np.float32)

    with torch.no_grad():
        logits8 = model(torch.from_numpy(x_test[:8])).numpy()
    save(args.out, "test_logits8", logits8, np.float32)
    # int8 cross-check: raw int8 fc3 outputs of the emulation for the same images
    _, yq8 = run_int8(q, x_test[:8])
    save(args.out, "test_q_logits8", yq8, np.int8)

    with open(os.path.join(args.out, "expected.txt"), "w") as f:
        f.write("f32_test_accuracy %.4f\n" % f32_acc)
        f.write("int8_test_accuracy %.4f\n" % int8_acc)
    print("wrote %s (f32 %.4f, int8 %.4f, train %.1fs)"
          % (args.out, f32_acc, int8_acc, train_time))


if __name__ == "__main__":
    main()
