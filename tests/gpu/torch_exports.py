#!/usr/bin/env python3
"""Today's PyTorch exports the house issue named, on the GPU machine (PyTorch
2.11, onnxruntime): DenseNet-121 by both exporters at opsets 17 and 20
(standalone BatchNormalization, refused at opset >= 16 before versions
were resolved as ONNX defines them), and PyTorch's own int8 export of
ResNet-18 and MobileNetV2 (torch.ao eager quantisation, fbgemm, the
legacy exporter: a Cast to UINT8 after every QuantizeLinear, scales as
Constant nodes). Each model is run by ONNX Runtime's CPU EP and by
dg-run on each device asked for; outputs must agree within 1e-4 of the
peak (float) or 4 steps of the output scale (int8; ORT with graph
optimisations off is the int8 oracle, tests/zoo/README.md).

    torch_exports.py BUILD_DIR [DEVICE...]      (default devices: 0 1 2)

One line per model and device, "ok - ..." or "FAIL - ...", or "skipped:
..." where an exporter is not there."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

build = sys.argv[1] if len(sys.argv) > 1 else "build"
devices = sys.argv[2:] or ["0", "1", "2"]
dg_run = os.path.join(build, "tools", "dg-run")
failed = 0


def report(ok, msg):
    global failed
    print("%s - %s" % ("ok" if ok else "FAIL", msg), flush=True)
    failed += not ok


def ort_run(path, x, plain):
    import onnxruntime as ort
    so = ort.SessionOptions()
    if plain:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


def check(name, path, x, int8_scale=None):
    import onnx
    m = onnx.load(path)
    iname = m.graph.input[0].name
    oname = m.graph.output[0].name
    ref = ort_run(path, x, plain=int8_scale is not None)
    tmp = tempfile.mkdtemp()
    np.save(os.path.join(tmp, "x.npy"), x)
    peak = float(np.max(np.abs(ref)))
    tol = 4 * int8_scale if int8_scale else 1e-4 * peak
    for dev in devices:
        out = os.path.join(tmp, "out%s" % dev)
        os.makedirs(out, exist_ok=True)
        r = subprocess.run([dg_run, path, "--device", dev, "--strict",
                            "--input", "%s=%s" % (iname, os.path.join(tmp, "x.npy")),
                            "--output", out, "--repeat", "1"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            report(False, "%s on device %s: dg-run: %s" %
                   (name, dev, (r.stderr or r.stdout).strip()[-300:]))
            continue
        got = np.load(os.path.join(out, oname.replace("/", "_") + ".npy"))
        err = float(np.max(np.abs(got.astype(np.float64) - ref)))
        report(err <= tol and peak > 0 and got.shape == ref.shape,
               "%s on device %s agrees with ONNX Runtime%s: worst error %.3g "
               "(tolerance %.3g, peak %.3g), top-1 %d vs %d" %
               (name, dev, " (unoptimised)" if int8_scale else "", err, tol,
                peak, int(np.argmax(got)), int(np.argmax(ref))))


def export(model, x, path, opset, dynamo):
    kw = {"opset_version": opset, "input_names": ["input"],
          "output_names": ["output"]}
    if dynamo:
        torch.onnx.export(model, (x,), path, dynamo=True, **kw)
    else:  # the legacy (TorchScript) exporter; torch < 2.5 has no dynamo
        try:
            torch.onnx.export(model, (x,), path, dynamo=False, **kw)
        except TypeError:
            torch.onnx.export(model, (x,), path, **kw)


tmpdir = tempfile.mkdtemp()
torch.manual_seed(0)
x = torch.randn(1, 3, 64, 64)
m = torchvision.models.densenet121(num_classes=100).eval()
for dynamo in (False, True):
    for opset in (17, 20):
        name = "densenet121 (%s exporter, opset %d)" % (
            "dynamo" if dynamo else "legacy", opset)
        path = os.path.join(tmpdir, "densenet_%d_%d.onnx" % (dynamo, opset))
        try:
            export(m, x, path, opset, dynamo)
        except Exception as e:  # an exporter missing here is not our failure
            print("skipped: %s: the export failed: %s" % (name, str(e)[:200]))
            continue
        check(name, path, x.numpy())

import torchvision.models.quantization as tq
engine = ("fbgemm" if "fbgemm" in torch.backends.quantized.supported_engines
          else "qnnpack")
torch.backends.quantized.engine = engine
for qname, ctor in (("resnet18", tq.resnet18), ("mobilenet_v2", tq.mobilenet_v2)):
    q = ctor(quantize=False, num_classes=100).eval()
    # Random running statistics, as tests/zoo/make_zoo.py gives its models:
    # with the defaults a random MobileNetV2's quantised output is all zero,
    # and comparing zeros proves nothing.
    g = torch.Generator().manual_seed(7)
    for mod in q.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(torch.rand(n, generator=g) * 0.4 - 0.2)
            mod.running_var.copy_(torch.rand(n, generator=g) * 1.5 + 0.5)
    q.fuse_model()
    q.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(q, inplace=True)
    with torch.no_grad():
        for k in range(8):
            q(torch.randn(1, 3, 64, 64))
        q(x)
    torch.ao.quantization.convert(q, inplace=True)
    path = os.path.join(tmpdir, "q_%s.onnx" % qname)
    try:
        export(q, x, path, 13, False)
    except Exception as e:
        print("skipped: torch.ao %s: the export failed: %s" % (qname, str(e)[:200]))
        continue
    import onnx
    from onnx import numpy_helper
    mm = onnx.load(path)
    # The output scale: the last DequantizeLinear's, a Constant or an
    # initializer.
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t)
              for n in mm.graph.node if n.op_type == "Constant"}
    consts.update({i.name: numpy_helper.to_array(i) for i in mm.graph.initializer})
    dq = [n for n in mm.graph.node if n.op_type == "DequantizeLinear" and
          n.output[0] == mm.graph.output[0].name]
    scale = float(np.asarray(consts[dq[0].input[1]]).reshape(-1)[0]) if dq else None
    check("PyTorch's own QDQ export of %s (torch.ao, %s)" % (qname, engine), path,
          x.numpy(), int8_scale=scale)
print("# torch %s, torchvision %s: %d failed" % (torch.__version__,
      torchvision.__version__, failed))
sys.exit(1 if failed else 0)
