#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every GPU number in one command, on any machine with a Vulkan device: the
# device (name, type, driver), the "vulkan" target's GEMM (N^3 fp32, next to
# the "cpu" target), single convolution layers of ResNet-18/-50 and
# MobileNetV2, whole-model latency on vulkan and on cpu, and the best
# CPU + GPU pipeline (--policy auto, 2 stages: the partitioner picks the
# targets) against the best single device. Latencies are vkpipe-bench's
# isolated p50 (one frame in flight).
# Prints a Markdown table and writes OUT/gpu-bench.json and OUT/gpu-bench.md.
#
#   scripts/gpu-bench.sh [--small] [--gemm N] [--frames N] [--models LIST]
#                        [--out DIR] [--build DIR]
#
# Defaults are sized for a real GPU (GEMM 4096^3, 224x224 layers and models,
# 20 frames, models resnet18,mobilenet_v2,resnet50). --small is for lavapipe /
# CPU devices: GEMM 512^3, layers at a quarter of their spatial size, 2
# frames. --models picks the whole models (comma-separated). Models are
# written with seeded random weights (tools/bench/make_cnn.py; ResNet-50 from
# torchvision's definition when torch is installed): nothing is downloaded.
# Needs a built tree (cmake --build build) and a Python 3 with numpy and
# onnx: $PYTHON, else /usr/bin/python3.
#
# Also: GEMM N^3 with --precision fp16 (float16 weights, float32 arithmetic),
# a skinny GEMM (M x K x N = 8 x 16384 x 1024; --small: 8 x 4096 x 256) with
# split-K chosen by shape and with VKPIPE_SPIRV_SPLITK=off, and whole models
# on vulkan at fp16 next to fp32. Every vulkan GEMM is also timed alone
# (", GEMM alone": A device-resident, no staging), and on devices whose
# cooperative matrices vkpipe enables, once more on them
# (VKPIPE_SPIRV_GEMM=coopmat).
# The device's peaks are measured (bench_vk_peak: float32 fma chains and a
# read of a device-local buffer), not the vendor's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
small=0 gemm= frames= out=build/gpu-bench build=build models=resnet18,mobilenet_v2,resnet50
while [[ $# -gt 0 ]]; do
  case "$1" in
    --small) small=1; shift ;;
    --gemm) gemm="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [[ $small == 1 ]]; then : "${gemm:=512}" "${frames:=2}"; scale=4; else
  : "${gemm:=4096}" "${frames:=20}"; scale=1; fi
py=${PYTHON:-/usr/bin/python3}
bench="$build/tools/vkpipe-bench" cli="$build/tools/vkpipe"
gemm_bin="$build/tests/codegen/spirv/bench_spirv_gemm"
peak_bin="$build/tests/runtime/vulkan/bench_vk_peak"
for f in "$bench" "$cli" "$gemm_bin" "$peak_bin"; do
  [[ -x $f ]] || { echo "gpu-bench: $f not built (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$out/models" "$out/raw"
raw="$out/raw"

echo "== device" >&2
"$cli" devices > "$raw/devices.txt" 2>&1 || { cat "$raw/devices.txt" >&2; exit 1; }
echo "== device peaks (fp32 fma, read bandwidth)" >&2
if [[ $small == 1 ]]; then peak_args="65536 32"; else peak_args=""; fi
"$peak_bin" $peak_args > "$raw/peak.txt" 2>&1 || cat "$raw/peak.txt" >&2

echo "== GEMM ${gemm}^3 fp32 (vulkan, cpu)" >&2
"$gemm_bin" "$gemm" > "$raw/gemm.txt" 2>&1 || { cat "$raw/gemm.txt" >&2; exit 1; }
echo "== GEMM ${gemm}^3 fp16 weights (vulkan)" >&2
"$gemm_bin" --fp16 "$gemm" > "$raw/gemm_fp16.txt" 2>&1 || cat "$raw/gemm_fp16.txt" >&2
if grep -q "kernels use them with VKPIPE_SPIRV_GEMM=coopmat" "$raw/devices.txt"; then
  echo "== GEMM ${gemm}^3 on cooperative matrices (vulkan)" >&2
  VKPIPE_SPIRV_GEMM=coopmat "$gemm_bin" --fp16 "$gemm" > "$raw/gemm_coopmat.txt" 2>&1 ||
    cat "$raw/gemm_coopmat.txt" >&2
fi
if [[ $small == 1 ]]; then skinny=8x4096x256; else skinny=8x16384x1024; fi
echo "== skinny GEMM $skinny: split-K by shape, then off" >&2
VKPIPE_SPIRV_SPLITK= "$gemm_bin" "$skinny" > "$raw/gemm_skinny.txt" 2>&1 || cat "$raw/gemm_skinny.txt" >&2
VKPIPE_SPIRV_SPLITK=off "$gemm_bin" "$skinny" > "$raw/gemm_skinny_nosplit.txt" 2>&1 ||
  cat "$raw/gemm_skinny_nosplit.txt" >&2

echo "== models" >&2
cnn=$(tr ',' '\n' <<< "$models" | grep -E '^(resnet18|mobilenet_v2)$' | paste -sd, -) || true
[[ -n $cnn ]] && "$py" tools/bench/make_cnn.py "$out/models" --only "$cnn" >/dev/null
if [[ ,$models, == *,resnet50,* ]] && "$py" -c 'import torch, torchvision' 2>/dev/null; then
  "$py" - "$out/models" <<'PY' >/dev/null 2>&1 || echo "   resnet50 export failed; skipped" >&2
import sys, torch, torchvision
m = torchvision.models.resnet50(weights=None).eval()
args = dict(input_names=["input"], output_names=["logits"], opset_version=17)
try:  # newer torch defaults to the dynamo exporter: ask for the TorchScript one
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), f"{sys.argv[1]}/resnet50.onnx",
                      dynamo=False, **args)
except TypeError:
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), f"{sys.argv[1]}/resnet50.onnx", **args)
PY
fi
# Single convolution layers (Conv + bias + Relu) as one-node models.
"$py" - "$out/models" "$scale" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
out, scale = sys.argv[1], int(sys.argv[2])
# name: (C, H, M, K, stride, group)
layers = {
    "r18_conv1_7x7s2": (3, 224, 64, 7, 2, 1),
    "r18_l1_3x3": (64, 56, 64, 3, 1, 1),
    "r18_l4_3x3": (512, 7, 512, 3, 1, 1),
    "r50_l2_1x1": (512, 28, 128, 1, 1, 1),
    "r50_l3_3x3": (256, 14, 256, 3, 1, 1),
    "mv2_pw_1x1": (24, 56, 144, 1, 1, 1),
    "mv2_dw_3x3": (144, 56, 144, 3, 1, 144),
}
rng = np.random.default_rng(18)
for name, (c, h, m, k, s, g) in layers.items():
    h = max(h // scale, k)
    w = (rng.standard_normal((m, c // g, k, k)) * np.sqrt(2.0 / (c // g * k * k))).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32) * 0.1
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[k // 2] * 4,
                            strides=[s, s], group=g)
    relu = helper.make_node("Relu", ["c"], ["y"])
    oh = (h + 2 * (k // 2) - k) // s + 1
    graph = helper.make_graph(
        [conv, relu], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, oh, oh])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, f"{out}/layer_{name}.onnx")
    with open(f"{out}/layer_{name}.flops", "w") as f:
        f.write(str(2 * m * (c // g) * k * k * oh * oh))
PY

for f in "$out"/models/layer_*.onnx; do
  n=$(basename "$f" .onnx)
  for t in vulkan cpu; do
    echo "== $n on $t" >&2
    "$bench" "$f" --policy "$t" --stages 1 --frames "$frames" --warmup 1 --no-single --timeout 600 \
      --json > "$raw/$n.$t.json" 2> "$raw/$n.$t.err" || echo "   failed (see $raw/$n.$t.err)" >&2
  done
done
for n in ${models//,/ }; do
  f="$out/models/$n.onnx"
  [[ -f $f ]] || { echo "   $n: no model (skipped)" >&2; continue; }
  for t in vulkan cpu; do
    echo "== $n on $t" >&2
    "$bench" "$f" --policy "$t" --stages 1 --frames "$frames" --warmup 1 --no-single --timeout 600 \
      --json > "$raw/$n.$t.json" 2> "$raw/$n.$t.err" || echo "   failed (see $raw/$n.$t.err)" >&2
  done
  echo "== $n on vulkan, fp16 weights" >&2
  "$bench" "$f" --policy vulkan --stages 1 --precision fp16 --frames "$frames" --warmup 1 \
    --no-single --timeout 600 --json > "$raw/$n.vulkan_fp16.json" 2> "$raw/$n.vulkan_fp16.err" ||
    echo "   failed (see $raw/$n.vulkan_fp16.err)" >&2
  echo "== $n: 2-stage auto pipeline" >&2
  "$bench" "$f" --policy auto --stages 2 --frames "$frames" --warmup 1 --timeout 600 --json \
    > "$raw/$n.pipeline.json" 2> "$raw/$n.pipeline.err" || echo "   failed (see $raw/$n.pipeline.err)" >&2
done

"$py" - "$out" "$gemm" "$small" <<'PY'
import glob, json, os, re, sys
out, gemm, small = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
raw = f"{out}/raw"
def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
dev = open(f"{raw}/devices.txt").read()
m = re.search(r"device \d+: (.*?)\s+\[selected\]", dev)
drv = re.search(r"driver:\s+(.*)", dev)
typ = re.search(r"type:\s+(.*)", dev)
res = {"schema": "vkpipe-gpu-bench/1", "small": small,
       "device": {"name": m.group(1) if m else None, "type": typ.group(1) if typ else None,
                  "driver": drv.group(1).strip() if drv else None,
                  "peak_gflops": None, "peak_gbps": None,
                  "note": "measured by bench_vk_peak: float32 fma chains, and a read of a "
                          "device-local buffer (not the vendor's figures)"},
       "gemm": {"n": gemm, "fp32": {}, "fp16": {}, "coopmat": {},
                "fp16_note": "float16 weights, float32 arithmetic (--precision fp16)",
                "alone_note": "'GEMM alone': A device-resident, one float staged in and out, "
                              "less the same graph without the matmul",
                "skinny": {}},
       "layers": [], "models": []}
def gemm_lines(name):
    try:
        lines = open(f"{raw}/{name}").read().splitlines()
    except OSError:
        return
    for line in lines:
        g = re.match(r"(\S+)\s+matmul (\S+?)( fp16)?( on device)?: ([\d.]+) ms/run, "
                     r"([\d.]+) GFLOP/s", line)
        if g:
            t = g.group(1) + (", GEMM alone" if g.group(4) else "")
            yield t, g.group(2), {"ms": float(g.group(5)), "gflops": float(g.group(6))}
try:
    peak = open(f"{raw}/peak.txt").read()
except OSError:
    peak = ""
g = re.search(r"peak fp32: ([\d.]+) GFLOP/s", peak)
res["device"]["peak_gflops"] = float(g.group(1)) if g else None
g = re.search(r"peak read: ([\d.]+) GB/s", peak)
res["device"]["peak_gbps"] = float(g.group(1)) if g else None
for t, _, v in gemm_lines("gemm.txt"):
    res["gemm"]["fp32"][t] = v
for t, _, v in gemm_lines("gemm_fp16.txt"):
    res["gemm"]["fp16"][t] = v
for t, _, v in gemm_lines("gemm_coopmat.txt"):
    res["gemm"]["coopmat"][t] = v
for key, name in (("split_k_by_shape", "gemm_skinny.txt"), ("split_k_off", "gemm_skinny_nosplit.txt")):
    for t, shape, v in gemm_lines(name):
        res["gemm"]["skinny"].setdefault(t, {"shape": shape})[key] = v
def p50(j):  # one frame at a time, alone: the layer's latency
    return j["isolated"]["latency_ms"]["p50"] if j and j.get("isolated") else None
for f in sorted(glob.glob(f"{out}/models/layer_*.onnx")):
    n = os.path.basename(f)[:-5]
    flops = int(open(f[:-5] + ".flops").read())
    row = {"layer": n[6:], "gflop": flops * 1e-9}
    for t in ("vulkan", "cpu"):
        ms = p50(load(f"{raw}/{n}.{t}.json"))
        row[t + "_ms"] = ms
        row[t + "_gflops"] = flops / (ms * 1e6) if ms else None
    res["layers"].append(row)
for f in sorted(glob.glob(f"{raw}/*.pipeline.json")):
    n = os.path.basename(f).split(".")[0]
    j = load(f)
    row = {"model": n}
    for t in ("vulkan", "cpu", "vulkan_fp16"):
        row[t + "_ms"] = p50(load(f"{raw}/{n}.{t}.json"))
    if j:
        row["pipeline_targets"] = [s["target"] for s in j["stages"]]
        row["pipeline_fps"] = j["pipelined"]["throughput_fps"]
        row["best_single"] = j.get("best_single_target")
        row["speedup_vs_best_single"] = j.get("speedup_vs_best_single")
    res["models"].append(row)
with open(f"{out}/gpu-bench.json", "w") as f:
    json.dump(res, f, indent=2)
def fmt(v, d=2):
    return "—" if v is None else f"{v:.{d}f}"
d = res["device"]
md = [f"Device: {d['name']} ({d['type']}), driver {d['driver']}; measured peaks "
      f"{fmt(d['peak_gflops'], 1)} GFLOP/s fp32, {fmt(d['peak_gbps'], 1)} GB/s read", "",
      f"| GEMM {gemm}³ fp32 | ms | GFLOP/s |", "|---|---|---|"]
for t, v in res["gemm"]["fp32"].items():
    md.append(f"| {t} | {fmt(v['ms'])} | {fmt(v['gflops'])} |")
for t, v in res["gemm"]["fp16"].items():
    md.append(f"| {t} fp16 weights | {fmt(v['ms'])} | {fmt(v['gflops'])} |")
for t, v in res["gemm"]["coopmat"].items():
    md.append(f"| {t} cooperative matrices (float16 products) | {fmt(v['ms'])} | {fmt(v['gflops'])} |")
md += ["", "| skinny GEMM (MxKxN) | target | split-K by shape ms | GFLOP/s | split-K off ms | GFLOP/s |",
       "|---|---|---|---|---|---|"]
for t, v in res["gemm"]["skinny"].items():
    on, off = v.get("split_k_by_shape", {}), v.get("split_k_off", {})
    md.append(f"| {v['shape']} | {t} | {fmt(on.get('ms'))} | {fmt(on.get('gflops'))} | "
              f"{fmt(off.get('ms'))} | {fmt(off.get('gflops'))} |")
md += ["", "| conv layer (+bias+relu) | GFLOP | vulkan ms | vulkan GFLOP/s | cpu ms | cpu GFLOP/s |",
       "|---|---|---|---|---|---|"]
for r in res["layers"]:
    md.append(f"| {r['layer']} | {fmt(r['gflop'], 3)} | {fmt(r['vulkan_ms'])} | "
              f"{fmt(r['vulkan_gflops'])} | {fmt(r['cpu_ms'])} | {fmt(r['cpu_gflops'])} |")
md += ["", "| model | vulkan ms | vulkan fp16 ms | cpu ms | 2-stage auto pipeline (targets) | fps | vs best single |",
       "|---|---|---|---|---|---|---|"]
for r in res["models"]:
    md.append(f"| {r['model']} | {fmt(r.get('vulkan_ms'))} | {fmt(r.get('vulkan_fp16_ms'))} | {fmt(r.get('cpu_ms'))} | "
              f"{'+'.join(r.get('pipeline_targets', [])) or '—'} | {fmt(r.get('pipeline_fps'))} | "
              f"{fmt(r.get('speedup_vs_best_single'))}× ({r.get('best_single') or '—'}) |")
text = "\n".join(md) + "\n"
open(f"{out}/gpu-bench.md", "w").write(text)
print(text, end="")
print(f"(written: {out}/gpu-bench.json, {out}/gpu-bench.md)", file=sys.stderr)
PY
