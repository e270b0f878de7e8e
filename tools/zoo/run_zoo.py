#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Runs every model of a zoo (export_zoo.py, then ort_run.js for the references)
# through vkpipe and compares the outputs with ONNX Runtime's, model by model.
# Needs only Python 3 and numpy (Debian's python3-numpy).
#
#   /usr/bin/python3 tools/zoo/run_zoo.py MANIFEST_DIR --vkpipe build/tools/vkpipe
#       [--targets ref,cpu,vulkan] [--only NAME,...] [--json OUT.json]
#       [--markdown OUT.md] [--dim NAME=VALUE ...] [--timeout S]
#       [--vulkan-max-gflop G] [--rtol R] [--bench-frames N]
#       [--bench-max-seconds S]
#
# Per model: 'vkpipe check MODEL' (does it import?), then per target
# 'vkpipe run MODEL --target T --input NAME=FILE.npy ... --output-dir
# MANIFEST_DIR/NAME/vkpipe-T' and a comparison of every output with ONNX
# Runtime's: the largest absolute error, and that error relative to the
# largest |reference| value ("max err" in the table; float outputs match when
# it is at most --rtol), exact equality for integer and bool outputs, and for
# classifiers whether the top-1 class (argmax of the first output) agrees.
# A matching run is then timed with 'vkpipe-bench MODEL --policy T --stages 1'
# (found next to --vkpipe): the table's ms is the sequential wall time per
# frame, --bench-frames frames after warm-up (3 frames on vulkan, whose first
# frames after loading were measured much slower than the rest; 1 elsewhere).
# A run that took longer than --bench-max-seconds (default 10: vkpipe-bench
# gives up on a frame after 10 s) is not benchmarked; then, and where the
# benchmark fails, the table shows the run's wall time instead ("run 42 s",
# import and compilation included).
#
# Every vkpipe command runs under --timeout seconds (default 600); the vulkan
# target (lavapipe, a software device, on machines without a GPU) is skipped for
# models estimated above --vulkan-max-gflop (default 1). One model's failure,
# timeout or crash never stops the others.
#
# --dim NAME=VALUE is for models exported with a dynamic axis: it is passed on,
# for the models that have a dynamic axis of that name only, to 'vkpipe check'
# and 'vkpipe run' when their --help mentions --dim, and to vkpipe-bench when
# its does (vkpipe before 5d0ce25 has no --dim and refuses symbolic dims).
# VALUE must be the size the saved inputs were exported with (the manifest's
# "dynamic_dims").
#
# Prints the Markdown report (a table, a summary line, the refusal reasons
# grouped across models) on stdout and writes it to --markdown; --json writes
# everything measured, including every refusal line.
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

STATUSES = ("match", "mismatch", "refused", "error", "timeout", "skipped", "ran")


def safe_name(name):
    """How 'vkpipe run' and ort_run.js name an output's .npy file."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def run_command(argv, timeout):
    """Runs argv in its own process group; on timeout the whole group (vkpipe
    and the compilers it started) is killed. Returns (rc or None on timeout,
    stdout, stderr, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, time.monotonic() - start
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err, time.monotonic() - start


def failure(rc, err, what, timeout):
    """Classifies a failed vkpipe command: {"status", "reason" (the first
    reason line), "reasons" (every line), "items" (how many there are)}.
    vkpipe lists what it cannot import or run indented under a header line
    that gives the count ("cannot import 581 items of ... (12 distinct
    problems):"), one line per distinct problem: "node 'n' (Op): why" for one
    node, "Op: 40 nodes ('a', 'b', 'c' and 37 more), the first: why" for
    several, and a last "not imported because an input comes from a node
    above ..." line counting the nodes that are fine but cut off."""
    if rc is None:
        return {"status": "timeout", "reason": f"no result in {timeout:g} s"}
    if rc < 0:
        return {"status": "error", "reason": f"{what} killed by signal {-rc}"}
    lines = [re.sub(r"^vkpipe \w+: ", "", line.rstrip()) for line in err.splitlines()
             if line.strip()]
    items = [line.strip() for line in lines
             if line.startswith("  ") and not line.strip().startswith("not imported because")]
    header = next((re.search(r"cannot (?:import|run) (\d+) ", line) for line in lines
                   if "cannot import" in line or "cannot run" in line), None)
    first = items[0] if items else (lines[0] if lines else f"{what} exited with status {rc}")
    return {"status": "refused" if header else "error",
            "reason": first,
            "reasons": items or lines,
            "items": int(header.group(1)) if header else len(items or lines)}


def compare(got_dir, reference_dir, ort_outputs, rtol, classifier):
    """Compares vkpipe's outputs with ONNX Runtime's; returns a result dict."""
    result = {"outputs": [], "max_abs": 0.0, "max_rel": 0.0}
    problems = []
    for index, (name, ref_info) in enumerate(ort_outputs.items()):
        ref = np.load(os.path.join(reference_dir, ref_info["file"]))
        path = os.path.join(got_dir, safe_name(name) + ".npy")
        entry = {"name": name}
        result["outputs"].append(entry)
        if not os.path.exists(path):
            problems.append(f"output '{name}' missing")
            continue
        got = np.load(path)
        entry.update(dtype=str(got.dtype), shape=list(got.shape))
        if got.shape != ref.shape:
            problems.append(f"'{name}' shape {list(got.shape)}, reference {list(ref.shape)}")
            continue
        if (got.dtype.kind == "f") != (ref.dtype.kind == "f"):
            problems.append(f"'{name}' dtype {got.dtype}, reference {ref.dtype}")
            continue
        if ref.dtype.kind == "f":
            g, r = got.astype(np.float64), ref.astype(np.float64)
            both_nan = np.isnan(g) & np.isnan(r)
            diff = np.where(both_nan, 0.0, np.abs(g - r))
            diff = np.where(np.isnan(diff), np.inf, diff)
            max_abs = float(diff.max()) if diff.size else 0.0
            finite = np.abs(r[np.isfinite(r)])
            scale = float(finite.max()) if finite.size else 0.0
            max_rel = max_abs / scale if scale > 0 else max_abs
            entry.update(max_abs=max_abs, max_rel=max_rel)
            result["max_abs"] = max(result["max_abs"], max_abs)
            result["max_rel"] = max(result["max_rel"], max_rel)
            if not max_rel <= rtol:
                problems.append(f"'{name}' max err {max_rel:.2g}")
        else:
            wrong = int(np.count_nonzero(got != ref))
            entry["wrong_elements"] = wrong
            if wrong:
                problems.append(f"'{name}' {wrong} of {ref.size} elements differ")
        if classifier and index == 0 and ref.size:
            entry["argmax_agrees"] = bool(np.array_equal(got.argmax(axis=-1),
                                                         ref.argmax(axis=-1)))
            result["argmax_agrees"] = entry["argmax_agrees"]
    result["status"] = "mismatch" if problems else "match"
    if problems:
        result["reason"] = "; ".join(problems)
    return result


def bench_ms(bench, model_path, target, frames, extra_args, timeout):
    """Sequential wall time per frame from vkpipe-bench, or (None, why)."""
    warmup = "3" if target == "vulkan" else "1"
    rc, out, err, _ = run_command(
        [bench, model_path, "--policy", target, "--stages", "1", "--frames", str(frames),
         "--warmup", warmup, "--no-single", "--json"] + extra_args, timeout)
    if rc != 0:
        return None, failure(rc, err, "vkpipe-bench", timeout)["reason"]
    try:
        seq = json.loads(out)["sequential"]
        return 1000.0 * seq["wall_s"] / seq["frames"], None
    except (ValueError, KeyError, ZeroDivisionError) as exc:
        return None, f"unreadable vkpipe-bench output: {exc}"


class Zoo:
    """The settings of one run and the per-model steps."""

    def __init__(self, args):
        self.args = args
        self.dir = args.manifest_dir
        with open(os.path.join(self.dir, "manifest.json")) as f:
            self.manifest = json.load(f)
        ort_path = os.path.join(self.dir, "ort.json")
        self.ort = {}
        if os.path.exists(ort_path):
            with open(ort_path) as f:
                self.ort = json.load(f)
        bench = os.path.join(os.path.dirname(args.vkpipe), "vkpipe-bench")
        self.bench = bench if os.access(bench, os.X_OK) and args.bench_frames > 0 else None
        self.dims = dict(d.split("=", 1) for d in args.dim)
        self.vkpipe_has_dim = self.bench_has_dim = False
        self.dim_note = None
        if self.dims:
            helps = [run_command([args.vkpipe, cmd, "--help"], 60)[1] for cmd in ("check", "run")]
            self.vkpipe_has_dim = all("--dim" in h for h in helps)
            if not self.vkpipe_has_dim:
                self.dim_note = (f"--dim {' '.join(args.dim)} not passed on: this vkpipe's "
                                 "check/run have no --dim option")
            self.bench_has_dim = bool(self.bench) and "--dim" in run_command(
                [self.bench, "--help"], 60)[1]

    def dim_flags(self, model):
        """--dim NAME=VALUE for the model's own dynamic dims (vkpipe refuses a
        size for a dim the model does not have)."""
        if not self.vkpipe_has_dim:
            return []
        return [arg for name, value in self.dims.items()
                if name in model.get("dynamic_dims", {}) for arg in ("--dim", f"{name}={value}")]

    def check(self, model, model_path):
        rc, _, err, secs = run_command(
            [self.args.vkpipe, "check", model_path] + self.dim_flags(model), self.args.timeout)
        if rc == 0:
            return {"status": "yes", "seconds": round(secs, 2)}
        return dict(failure(rc, err, "vkpipe check", self.args.timeout), seconds=round(secs, 2))

    def run_target(self, model, model_path, target, ort_result):
        gflops = model.get("gflops")
        if target == "vulkan" and gflops is not None and gflops > self.args.vulkan_max_gflop:
            return {"status": "skipped",
                    "reason": f"{gflops:.1f} GFLOP > {self.args.vulkan_max_gflop:g}"}
        out_dir = os.path.join(self.dir, model["dir"], "vkpipe-" + target)
        shutil.rmtree(out_dir, ignore_errors=True)
        argv = [self.args.vkpipe, "run", model_path, "--target", target, "--output-dir", out_dir]
        for inp in model["inputs"]:
            argv += ["--input", f"{inp['name']}={os.path.join(self.dir, inp['file'])}"]
        rc, _, err, secs = run_command(argv + self.dim_flags(model), self.args.timeout)
        if rc != 0:
            return dict(failure(rc, err, "vkpipe run", self.args.timeout), seconds=round(secs, 2))
        if ort_result.get("status") != "ok":
            return {"status": "ran", "reason": "no ONNX Runtime reference",
                    "seconds": round(secs, 2)}
        result = compare(out_dir, self.dir, ort_result["outputs"], self.args.rtol,
                         model["family"] == "classification")
        result["seconds"] = round(secs, 2)
        if (result["status"] == "match" and self.bench
                and secs <= self.args.bench_max_seconds):
            ms, why = bench_ms(self.bench, model_path, target, self.args.bench_frames,
                               self.dim_flags(model) if self.bench_has_dim else [],
                               self.args.timeout)
            result["ms_per_frame"] = ms
            if why:
                result["bench_error"] = why
        return result

    def run_model(self, model):
        record = {"name": model["name"], "family": model["family"],
                  "gflops": model.get("gflops"), "opset": model.get("opset"),
                  "dynamic": model.get("dynamic", False), "targets": {}}
        if model["status"] != "ok":
            record["import"] = {"status": "export_failed", "reason": model.get("reason", "")}
            return record
        for name, value in self.dims.items():
            saved = model.get("dynamic_dims", {}).get(name)
            if saved is not None and int(value) != saved:
                record["import"] = {"status": "skipped",
                                    "reason": f"--dim {name}={value}, but the inputs were "
                                              f"saved with {name}={saved}"}
                return record
        ort_result = self.ort.get("models", {}).get(model["name"], {"status": "missing"})
        record["ort"] = {k: ort_result[k] for k in ("status", "ms", "reason") if k in ort_result}
        model_path = os.path.join(self.dir, model["file"])
        record["import"] = self.check(model, model_path)
        if record["import"]["status"] != "yes":
            return record
        for target in self.args.targets:
            record["targets"][target] = self.run_target(model, model_path, target, ort_result)
        return record


# ------------------------------------------------------------- reporting


def reason_count(line):
    """How many nodes (or values) a refusal line stands for."""
    m = re.match(r"[^:']*: (\d+) (?:nodes|of them) \(", line)
    return int(m.group(1)) if m else 1


def reason_key(line):
    """Groups a refusal line across models: node and tensor names dropped,
    the op kept."""
    m = re.match(r"node '.*?' \(([^)]*)\): (.*)", line)
    grouped = re.match(r"([^:']*): \d+ (?:nodes|of them) \(.*?\), the first: (.*)", line)
    if m:
        op, what = m.groups()
    elif grouped:
        op, what = grouped.groups()
    else:
        m = re.match(r"(graph input|graph output|initializer) '.*?': (.*)", line)
        op, what = m.groups() if m else ("", line)
    what = re.sub(r"'[^']*'", "'…'", what)
    return f"{op}: {what}" if op else what


def cell(result):
    """One target's table cell."""
    status = result["status"]
    if status in ("match", "mismatch"):
        text = (f"match {result['max_rel']:.1e}" if status == "match"
                else f"mismatch: {result['reason']}")
        if "argmax_agrees" in result:
            text += ", top-1 " + ("same" if result["argmax_agrees"] else "differs")
        if result.get("ms_per_frame") is not None:
            text += f", {result['ms_per_frame']:.1f} ms"
        elif status == "match":
            text += f", run {result['seconds']:.1f} s"
        return text
    return with_reason(status, result)


def with_reason(status, step):
    """'refused (3 items): first reason line'."""
    reason = step.get("reason", "")
    more = step.get("items", 0)
    label = f"{status} ({more} items)" if more > 1 else status
    return f"{label}: {reason}" if reason else label


def md_escape(text):
    return text.replace("|", "\\|")


def report(records, args, zoo, started):
    """The Markdown report: settings, the table, the summary, the reasons."""
    lines = []
    machine = f"{len(os.sched_getaffinity(0))} cores, {platform.machine()}"
    try:
        with open("/proc/cpuinfo") as f:
            model_name = re.search(r"model name\s*:\s*(.*)", f.read())
        if model_name:
            machine += f", {model_name.group(1).strip()}"
    except OSError:
        pass
    commit = run_command(["git", "-C", os.path.dirname(os.path.abspath(args.vkpipe)),
                          "rev-parse", "--short", "HEAD"], 30)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines.append(f"- date: {started:%Y-%m-%d %H:%M} UTC; machine: {machine}; "
                 f"load average at the start {load}")
    lines.append("- command: `/usr/bin/python3 " + shlex.join(sys.argv) + "`")
    lines.append(f"- vkpipe: `{args.vkpipe}`"
                 + (f" (commit {commit[1].strip()})" if commit[0] == 0 else ""))
    onnxruntime = zoo.ort.get("onnxruntime", "not run")
    lines.append(f"- manifest: torch {zoo.manifest.get('torch')}, torchvision "
                 f"{zoo.manifest.get('torchvision')}, "
                 f"{'small' if zoo.manifest.get('small') else 'full-size'} inputs; "
                 f"ONNX Runtime {onnxruntime} (1 thread)")
    lines.append(f"- match: max |vkpipe - ORT| / max |ORT| <= {args.rtol:g}; vulkan skipped "
                 f"above {args.vulkan_max_gflop:g} GFLOP; timeout {args.timeout:g} s")
    if zoo.dim_note:
        lines.append(f"- {zoo.dim_note}")
    lines.append("")
    head = ["model", "GFLOP", "imports"] + args.targets + ["ORT ms (1 thread)"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in records:
        imp = r["import"]
        imp_text = "yes" if imp["status"] == "yes" else with_reason(imp["status"], imp)
        row = [r["name"], f"{r['gflops']:.2f}" if r.get("gflops") is not None else "?", imp_text]
        row += [cell(r["targets"][t]) if t in r["targets"] else "" for t in args.targets]
        ort = r.get("ort", {})
        row.append(f"{ort['ms']:.1f}" if ort.get("status") == "ok" else ort.get("status", ""))
        lines.append("| " + " | ".join(md_escape(c) for c in row) + " |")
    lines.append("")
    lines.append(summary(records, args.targets))
    lines.append("")
    for title, groups in (("import", group_reasons(records, None)),) + tuple(
            (f"target '{t}'", group_reasons(records, t)) for t in args.targets):
        if not groups:
            continue
        lines.append(f"Refusals and errors at {title}, grouped (models: how many refused "
                     "for it; nodes: how many nodes it stands for):")
        lines.append("")
        lines.append("| reason | models | nodes | which models |")
        lines.append("|---|---:|---:|---|")
        for key, (models, count) in groups:
            lines.append(f"| {md_escape(key)} | {len(models)} | {count} | "
                         f"{', '.join(models)} |")
        lines.append("")
    return "\n".join(lines)


def group_reasons(records, target):
    """[(reason key, ([model, ...], lines))] over the refusals and errors of
    the import step (target None) or of one target, most models first."""
    models, lines = {}, {}
    for r in records:
        step = r["import"] if target is None else r["targets"].get(target)
        if not step or step["status"] not in ("refused", "error"):
            continue
        for line in step.get("reasons") or [step.get("reason", "")]:
            key = reason_key(line)
            names = models.setdefault(key, [])
            if r["name"] not in names:
                names.append(r["name"])
            lines[key] = lines.get(key, 0) + reason_count(line)
    ordered = sorted(models, key=lambda k: (-len(models[k]), -lines[k], k))
    return [(key, (models[key], lines[key])) for key in ordered]


def summary(records, targets):
    """'N of M import; N match on ref (...); ...'."""
    total = len(records)
    imported = sum(r["import"]["status"] == "yes" for r in records)
    parts = [f"{imported} of {total} import"]
    for t in targets:
        counts = {}
        for r in records:
            if t in r["targets"]:
                status = r["targets"][t]["status"]
                counts[status] = counts.get(status, 0) + 1
        others = ", ".join(f"{counts[s]} {s}" for s in STATUSES[1:] if counts.get(s))
        parts.append(f"{counts.get('match', 0)} match on {t}" + (f" ({others})" if others else ""))
    return "; ".join(parts) + "."


def main():
    parser = argparse.ArgumentParser(
        description="Run the vkpipe model zoo against ONNX Runtime (see the top of this file).")
    parser.add_argument("manifest_dir")
    parser.add_argument("--vkpipe", required=True, help="path to build/tools/vkpipe")
    parser.add_argument("--targets", default="ref,cpu,vulkan")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--markdown", help="write the report to this file too")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                        help="size of a dynamic axis (repeatable)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per command")
    parser.add_argument("--vulkan-max-gflop", type=float, default=1.0)
    parser.add_argument("--rtol", type=float, default=1e-3,
                        help="largest error relative to max |reference| that matches")
    parser.add_argument("--bench-frames", type=int, default=3,
                        help="frames timed per matching run (0: no timing)")
    parser.add_argument("--bench-max-seconds", type=float, default=10,
                        help="benchmark only runs that took at most this long")
    args = parser.parse_args()
    args.targets = [t for t in args.targets.split(",") if t]
    for d in args.dim:
        if not re.fullmatch(r"[^=]+=\d+", d):
            parser.error(f"--dim {d}: expected NAME=VALUE")
    if not os.access(args.vkpipe, os.X_OK):
        parser.error(f"--vkpipe {args.vkpipe}: not an executable")
    started = datetime.datetime.now(datetime.timezone.utc)

    zoo = Zoo(args)
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - {m["name"] for m in zoo.manifest["models"]}
    if unknown:
        parser.error(f"--only: not in the manifest: {', '.join(sorted(unknown))}")
    records = []
    for model in zoo.manifest["models"]:
        if names and model["name"] not in names:
            continue
        try:
            record = zoo.run_model(model)
        except Exception as exc:  # a harness bug on one model must not lose the others
            record = {"name": model["name"], "family": model.get("family"),
                      "gflops": model.get("gflops"), "targets": {},
                      "import": {"status": "error", "reason": f"run_zoo.py: {exc!r}"}}
        records.append(record)
        steps = [record["import"]["status"]] + [
            f"{t} {v['status']}" for t, v in record["targets"].items()]
        print(f"{model['name']}: {', '.join(steps)}", file=sys.stderr, flush=True)

    text = report(records, args, zoo, started)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "vkpipe-zoo-run/1", "date": started.isoformat(timespec="seconds"),
                       "argv": sys.argv, "summary": summary(records, args.targets),
                       "models": records}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
