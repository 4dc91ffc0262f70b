#!/usr/bin/env python3
"""LeNet-5 on Fashion-MNIST from Python: the same network as examples/lenet.c,
built layer by layer with directgraph's Python builder from the same
weights (examples/lenet-weights), f32 and int8, and its test accuracy.

    PYTHONPATH=build/python python3 examples/python/lenet.py [--int8]
        [--weights DIR] [--data DIR] [--limit N] [--batch N] [--device KIND]

Prints "f32 accuracy 0.9138 over 10000 images" (the C example's figure,
examples/lenet-weights/expected.txt) and the plan.
"""

import argparse
import gzip
import os
import sys

import numpy as np

import directgraph as dg

HERE = os.path.dirname(os.path.abspath(__file__))


def load_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
            for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def build(weights, batch, int8):
    def w(name):
        return np.load(os.path.join(weights, name + ".npy"))

    g = dg.Graph("lenet-int8" if int8 else "lenet")
    x = g.input("image", (batch, 1, 28, 28))
    pool = dict(kernel=2, stride=2)
    if not int8:
        x = g.conv2d(x, w("conv1_w"), w("conv1_b"), padding="same_upper",
                     activation="relu", name="conv1")
        x = g.max_pool2d(x, name="pool1", **pool)
        x = g.conv2d(x, w("conv2_w"), w("conv2_b"), activation="relu",
                     name="conv2")
        x = g.max_pool2d(x, name="pool2", **pool)
        x = g.flatten(x, 1, name="flatten")
        x = g.fully_connected(x, w("fc1_w"), w("fc1_b"), activation="relu",
                              name="fc1")
        x = g.fully_connected(x, w("fc2_w"), w("fc2_b"), activation="relu",
                              name="fc2")
        x = g.fully_connected(x, w("fc3_w"), w("fc3_b"), name="fc3")
    else:
        def layer(name, x, **conv):
            wq = g.constant(w(name + "_wq"), name + "_wq", quant=dg.Quant(
                scales=w(name + "_wscale"), axis=0))
            yq = w(name + "_yq")
            y_quant = dg.Quant(float(yq[0]), int(yq[1]))
            if "padding" in conv or "fc" not in name:
                return g.qconv2d(x, wq, w(name + "_bq"), y_quant=y_quant,
                                 name=name, activation="relu", **conv)
            act = None if name == "fc3" else "relu"
            return g.qfully_connected(x, wq, w(name + "_bq"), y_quant=y_quant,
                                      activation=act, name=name)

        qin = w("q_input")
        x = g.quantize(x, "i8", dg.Quant(float(qin[0]), int(qin[1])),
                       name="quantize")
        x = layer("conv1", x, padding="same_upper")
        x = g.max_pool2d(x, name="pool1", **pool)
        x = layer("conv2", x)
        x = g.max_pool2d(x, name="pool2", **pool)
        x = g.flatten(x, 1, name="flatten")
        for name in ("fc1", "fc2", "fc3"):
            x = layer(name, x)
        x = g.dequantize(x, name="dequantize")
    g.output("probs", g.softmax(x, 1, name="softmax"))
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", default=os.path.join(HERE, "..",
                                                      "lenet-weights"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--int8", action="store_true")
    ap.add_argument("--limit", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--device", default=None,
                    help="a device kind (cpu, vulkan, opencl, npu); "
                    "default: placement chooses")
    a = ap.parse_args()
    images = load_idx(os.path.join(a.data, "t10k-images-idx3-ubyte.gz"))
    labels = load_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte.gz"))
    n = min(a.limit, len(labels)) // a.batch * a.batch
    if n == 0:
        sys.exit("lenet.py: --limit %d is below one batch of %d" %
                 (a.limit, a.batch))
    s = dg.Session(build(a.weights, a.batch, a.int8), devices=a.device)
    x = (images[:n].astype(np.float32) / 255.0).reshape(n, 1, 28, 28)
    correct = 0
    for i in range(0, n, a.batch):
        (probs,) = s.run(None, {"image": x[i:i + a.batch]})
        correct += int((probs.argmax(1) == labels[i:i + a.batch]).sum())
    print(s.plan)
    print("%s accuracy %.4f over %d images" %
          ("int8" if a.int8 else "f32", correct / n, n))


if __name__ == "__main__":
    main()
