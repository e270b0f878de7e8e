# SPDX-License-Identifier: Apache-2.0
"""vkpipe from Python: load, partition, build, run and pipeline models.

    import numpy as np
    import vkpipe

    model = vkpipe.load("model.onnx", dims={"batch": 1})
    plan = model.partition(policy="auto", stages=2)
    print(plan)                                  # stages, targets, estimates
    with plan.pipeline() as pipe:
        y = pipe.infer(x=np.random.rand(1, 64).astype(np.float32))["y"]
        frames = [pipe.submit(x=frame) for frame in stream]
        outputs = [f.result() for f in frames]   # in order, each exactly once

Tensors go in as NumPy arrays or anything with ``__dlpack__`` (PyTorch
tensors included), without a copy on the way in beyond the one into the
pipeline's staging slot; outputs come back as NumPy arrays that own the
library's buffers (export them on with ``__dlpack__``). Every error is a
:class:`vkpipe.Error` subclass carrying the library's message. See
docs/python.md.
"""
from __future__ import annotations

import collections
import json
import os
import threading
import time
import warnings
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, Union)

from . import _vkpipe
from ._vkpipe import (CancelledError, DeviceError, Error, InternalError,
                      InvalidArgumentError, IOError, NotFoundError,
                      OutOfMemoryError, ParseError, StateError, TimeoutError,
                      UnsupportedError)

__all__ = [
    "load", "devices", "calibrate", "Model", "Plan", "Stage", "Pipeline",
    "Frame", "TensorSpec", "Device", "Fallback",
    "Error", "InvalidArgumentError", "ParseError", "NotFoundError",
    "UnsupportedError", "IOError", "DeviceError", "StateError",
    "TimeoutError", "CancelledError", "OutOfMemoryError", "InternalError",
]

__version__ = _vkpipe.version()

PathLike = Union[str, "os.PathLike[str]"]
Profile = Union[None, PathLike, Mapping[str, Any]]


class TensorSpec(NamedTuple):
    """What a model input or output is: name, dtype name, shape."""
    name: str
    dtype: str
    shape: Tuple[int, ...]


class Device(NamedTuple):
    """A target and the device it runs on; ``reason`` says why it is not
    available when ``available`` is False."""
    target: str
    available: bool
    reason: Optional[str]
    device: str


class Fallback(NamedTuple):
    """A node that runs on its stage's target because ``instead_of`` could
    not run it, in that target's words."""
    node: str
    instead_of: str
    reason: str


class Stage(NamedTuple):
    """One pipeline stage of a plan."""
    name: str
    target: str
    estimated_ms: float
    threads: int
    nodes: List[str]
    fallbacks: List[Fallback]
    inputs: List[TensorSpec]
    outputs: List[TensorSpec]
    #: Copies of the stage that run frames side by side (docs/pipeline-config.md).
    replicas: int = 1


def _specs(rows) -> List[TensorSpec]:
    return [TensorSpec(n, d, tuple(s)) for n, d, s in rows]


def _profile_json(profile: Profile) -> Optional[str]:
    if profile is None:
        return None
    if isinstance(profile, str) and profile == "default":
        return "default"  # the documented defaults (no JSON text is this)
    if isinstance(profile, Mapping):
        return json.dumps(profile)
    with open(os.fspath(profile), encoding="utf-8") as f:
        return f.read()


def devices() -> List[Device]:
    """Every built-in target (ref, cpu, vulkan), whether it can be used here
    and the device the cost model places it on."""
    return [Device(*row) for row in _vkpipe.targets()]


def calibrate(path: Optional[PathLike] = None, *, profile: Profile = None,
              matmul_size: int = 0, elementwise: int = 0,
              repeats: int = 0) -> Dict[str, Any]:
    """Measures every available target with micro-benchmarks (as ``vkpipe
    calibrate`` does) and returns the device profile as a dict, which
    :meth:`Model.partition` accepts as ``profile=``. Writes it to ``path``
    when given. Starts from ``profile`` (a dict or a JSON file) or the
    defaults. A target whose benchmark fails keeps its previous rates and
    the reason is reported as a warning."""
    text, notes = _vkpipe.calibrate(_profile_json(profile), matmul_size,
                                    elementwise, repeats)
    if notes:
        warnings.warn("vkpipe.calibrate: " + notes.strip(), RuntimeWarning,
                      stacklevel=2)
    if path is not None:
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(text)
    return json.loads(text)


def load(path: PathLike, *, dims: Optional[Mapping[str, int]] = None,
         max_dims: Optional[Mapping[str, int]] = None,
         shapes: Optional[Mapping[str, Sequence[int]]] = None,
         no_fusion: bool = False) -> "Model":
    """Loads a model: a vkpipe JSON graph, an ONNX file or a built ``.vkp``
    artifact (already partitioned and compiled).

    ``dims`` sizes symbolic dimensions by name (``{"batch": 8}``);
    ``max_dims`` lets one vary at run time up to a bound (``{"batch": 8}``:
    inputs of any batch from 0 to 8; the model's inputs then show the bound,
    and ops that cannot take a varying extent are refused naming the node);
    ``shapes`` gives whole input shapes (``{"x": (8, 3, 224, 224)}``).
    ``no_fusion`` imports exporter-expanded subgraphs node by node (ONNX
    only)."""
    path = os.fspath(path)
    if _vkpipe.is_artifact(path):
        if dims or max_dims or shapes or no_fusion:
            raise InvalidArgumentError(
                f"'{path}' is a built artifact: its shapes are fixed, so "
                "dims, max_dims, shapes and no_fusion do not apply")
        return Model(path, None, _vkpipe.load_artifact(path))
    bindings = list(dims.items()) if dims else []
    bindings += [(k, v, True) for k, v in max_dims.items()] if max_dims else []
    graph = _vkpipe.load_graph(
        path, bindings or None,
        [(k, list(v)) for k, v in shapes.items()] if shapes else None,
        no_fusion)
    return Model(path, graph, None)


class Model:
    """A loaded model. Made by :func:`load`."""

    def __init__(self, path: str, graph, artifact) -> None:
        self.path = path
        self._graph = graph
        self._artifact = artifact
        if graph is not None:
            info = graph.info()
            self.name: str = info["name"]
            self.inputs: List[TensorSpec] = _specs(info["inputs"])
            self.outputs: List[TensorSpec] = _specs(info["outputs"])
            self.nodes: List[Tuple[str, str]] = [(n, op) for n, op, _ in info["nodes"]]
        else:
            plan = Plan(artifact.plan(), None)
            self.name = plan.name
            self.inputs = plan.inputs
            self.outputs = [s for st in plan.stages for s in st.outputs
                            if s.name in plan.outputs]
            self.nodes = []
            self._plan = plan

    @property
    def is_artifact(self) -> bool:
        """True for a model loaded from a ``.vkp``."""
        return self._artifact is not None

    def __repr__(self) -> str:
        kind = "artifact" if self.is_artifact else f"{len(self.nodes)} nodes"
        return f"<vkpipe.Model '{self.name}' ({kind}) from '{self.path}'>"

    def _need_graph(self, what: str):
        if self._graph is None:
            raise StateError(f"{what}: '{self.path}' is a built artifact; "
                             "load the source model for that")
        return self._graph

    def check(self, target: Optional[str] = None) -> None:
        """Checks that every node can run on ``target`` (all nodes that
        cannot are listed in one :class:`UnsupportedError`). Without a
        target, checks what loading already checked (the graph is valid)."""
        if target is not None:
            self._need_graph("check").check(target)

    def run(self, inputs: Optional[Mapping[str, Any]] = None, /, *,
            target: str = "ref", **kw_inputs: Any) -> Dict[str, Any]:
        """Runs the whole model once on one target (compile, load, run),
        without a pipeline: the way to get reference outputs."""
        graph = self._need_graph("run")
        args = _ordered_inputs(self.inputs, inputs, kw_inputs)
        outs = graph.run(target, args)
        return dict(zip((o.name for o in self.outputs), outs))

    def partition(self, *, policy: str = "auto", stages: int = 0,
                  assign: Optional[Mapping[str, str]] = None,
                  profile: Profile = None, fallback: Optional[str] = None,
                  max_stages: int = 0, keep_islands: bool = False,
                  replicas: Union[int, str] = 1) -> "Plan":
        """Places nodes on targets and cuts the model into pipeline stages.

        ``policy`` is "auto" (by cost) or a target name; ``stages`` the
        number of stages (0: choose, up to ``max_stages``, default 8);
        ``assign`` maps node-name globs to targets (manual placement);
        ``profile`` a device profile (dict, or a JSON file from
        :func:`calibrate`), or "default" for the documented defaults;
        without it, as the command-line tools do, ``$VKPIPE_PROFILE``
        ("default" or a file), else the machine's own profile, measured on
        the first run (a few seconds) and cached (docs/pipeline-config.md);
        ``fallback`` the target for nodes the policy's cannot run (default:
        the target that declares itself the default fallback, "cpu" among
        the built-ins); ``replicas`` runs every stage as that many copies side
        by side (host stages only), or "auto" to choose with the threads
        and stages by estimated throughput."""
        if self._graph is None:
            if (policy, stages, assign, profile, fallback, replicas) != (
                    "auto", 0, None, None, None, 1):
                raise InvalidArgumentError(
                    f"'{self.path}' is a built artifact: it is already "
                    "partitioned; partition the source model instead")
            return self._plan
        plan, info = _vkpipe.partition(
            self._graph, policy, fallback, stages, max_stages,
            list(assign.items()) if assign else None, keep_islands,
            _profile_json(profile), self.name or "plan",
            os.path.abspath(self.path),
            -1 if replicas == "auto" else int(replicas))
        return Plan(plan, info, self)

    def build(self, path: PathLike, *, threads: int = 0, **partition_args: Any) -> "Plan":
        """Partitions (see :meth:`partition`) and writes a ``.vkp`` artifact
        that runs without the source model or a compiler. Returns the plan."""
        plan = self.partition(**partition_args)
        plan.build(path, threads=threads)
        return plan

    def pipeline(self, *, ring_depth: int = 0, sequential: bool = False,
                 threads: int = 0, trace_capacity: int = 0,
                 **partition_args: Any) -> "Pipeline":
        """Partitions (see :meth:`partition`) and starts a :class:`Pipeline`."""
        return Pipeline(self.partition(**partition_args), ring_depth=ring_depth,
                        sequential=sequential, threads=threads,
                        trace_capacity=trace_capacity)

    def save(self, path: PathLike) -> None:
        """Saves the model as a vkpipe JSON graph plus its ``.bin``."""
        self._need_graph("save").save(os.fspath(path))


class Plan:
    """Stages, their targets and estimates: what :meth:`Model.partition`
    returns and a :class:`Pipeline` runs."""

    def __init__(self, native, info: Optional[Dict[str, Any]], model: Optional[Model] = None) -> None:
        self._native = native
        self._model = model
        desc = native.info()
        self.name: str = desc["name"]
        self.inputs: List[TensorSpec] = _specs(desc["inputs"])
        self.outputs: List[str] = list(desc["outputs"])
        self.stages: List[Stage] = [
            Stage(s["name"], s["target"], s["estimated_ms"], s["threads"],
                  s["nodes"], [Fallback(*f) for f in s["fallbacks"]],
                  _specs(s["inputs"]), _specs(s["outputs"]), s["replicas"])
            for s in desc["stages"]]
        info = info or {}
        #: Estimated milliseconds per frame in steady state (the slowest stage
        #: or device), or None for a plan read from an artifact.
        self.bottleneck_ms: Optional[float] = info.get("bottleneck_ms")
        #: Per stage: compute_ms, transfer_ms, bytes_in, bytes_out.
        self.stage_costs: List[Dict[str, float]] = info.get("stages", [])
        #: Nodes not on the policy's first choice: (node, target, why).
        self.moved: List[Tuple[str, str, str]] = info.get("moved", [])
        #: Lines the partitioner thought worth telling.
        self.notes: Optional[str] = info.get("notes")

    @property
    def fallbacks(self) -> List[Fallback]:
        """Every node that fell back from a target that could not run it."""
        return [f for s in self.stages for f in s.fallbacks]

    def __repr__(self) -> str:
        lines = [f"plan '{self.name}': {len(self.stages)} stage(s)"
                 + (f", bottleneck {self.bottleneck_ms:.3f} ms" if self.bottleneck_ms is not None else "")]
        for s in self.stages:
            lines.append(f"  {s.name:<8} {s.target:<7} {len(s.nodes):>4} nodes "
                         f"{s.estimated_ms:9.3f} ms")
        for f in self.fallbacks:
            lines.append(f"  fallback: {f.node} not on {f.instead_of}: {f.reason}")
        return "\n".join(lines)

    def to_json(self) -> str:
        """The plan file's text (docs/pipeline-config.md)."""
        return self._native.to_json()

    def save(self, path: PathLike) -> None:
        """Writes the plan file (stages name their nodes in the source
        model, referred to by absolute path)."""
        self._native.save(os.fspath(path))

    def build(self, path: PathLike, *, threads: int = 0) -> None:
        """Compiles every stage and writes a ``.vkp`` artifact."""
        model = self._model.path if self._model else None
        self._native.build(os.fspath(path), model=model, threads=threads)

    def pipeline(self, **options: Any) -> "Pipeline":
        """Starts a :class:`Pipeline` running this plan."""
        return Pipeline(self, **options)


def _ordered_inputs(specs: Sequence[TensorSpec], inputs: Optional[Mapping[str, Any]],
                    kw_inputs: Mapping[str, Any]) -> List[Any]:
    if inputs is None:
        given = kw_inputs
    elif kw_inputs:
        given = dict(inputs)
        given.update(kw_inputs)
    else:
        given = inputs
    try:
        args = [given[s.name] for s in specs]
    except KeyError:
        missing = [s.name for s in specs if s.name not in given]
        raise InvalidArgumentError(
            f"missing input(s) {', '.join(map(repr, missing))}; the model "
            f"takes {', '.join(repr(s.name) for s in specs)}") from None
    if len(given) != len(specs):
        names = {s.name for s in specs}
        extra = [k for k in given if k not in names]
        raise InvalidArgumentError(
            f"unknown input(s) {', '.join(map(repr, extra))}; the model "
            f"takes {', '.join(repr(s.name) for s in specs)}")
    return args


class Frame:
    """A frame in flight: what :meth:`Pipeline.submit` returns. Like a
    ``concurrent.futures.Future``: :meth:`result` waits for the frame and
    returns its outputs, or raises the error that failed this frame only."""

    __slots__ = ("seq", "_pipe", "_outputs", "_error", "_done", "latency_ms")

    def __init__(self, pipe: "Pipeline", seq: int) -> None:
        self.seq = seq
        self._pipe = pipe  # kept: a frame keeps its pipeline alive
        self._outputs: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None
        self._done = False
        #: Milliseconds from submit to the frame's last stage finishing.
        self.latency_ms: Optional[float] = None

    def __repr__(self) -> str:
        state = "failed" if self._error else ("done" if self._done else "pending")
        return f"<vkpipe.Frame {self.seq} {state}>"

    def done(self) -> bool:
        """True once the frame's result has been collected."""
        return self._done

    def _finish(self, outputs, error, latency_ns, names) -> None:
        if error is None:
            self._outputs = dict(zip(names, outputs))
        self._error = error
        self.latency_ms = latency_ns / 1e6 if latency_ns is not None else None
        self._done = True

    def _wait(self, timeout: Optional[float]) -> None:
        if not self._done:
            self._pipe._collect(self, timeout)

    def result(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The frame's outputs by name; raises this frame's error, or
        :class:`TimeoutError` after ``timeout`` seconds (None: no limit)."""
        self._wait(timeout)
        self._pipe._claim(self.seq)
        if self._error is not None:
            raise self._error
        return self._outputs  # type: ignore[return-value]

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The frame's error, or None when it succeeded."""
        self._wait(timeout)
        return self._error


class Pipeline:
    """Runs a plan as a pipeline: a worker per stage, frames overlapping.

    ``infer`` runs one frame synchronously; ``submit`` launches a frame and
    returns a :class:`Frame`; ``results()`` yields frames in order. One
    thread (the producer) may submit while others take results. Every
    submitted frame yields exactly one result, in order. Close it (or use it
    as a context manager); closing with frames in flight is safe and
    cancels them."""

    _POLL_S = 0.05  # how often a waiting collector looks at close()

    def __init__(self, plan: Union[Plan, Model, PathLike], *, ring_depth: int = 0,
                 sequential: bool = False, threads: int = 0,
                 trace_capacity: int = 0, **partition_args: Any) -> None:
        if isinstance(plan, (str, os.PathLike)):
            plan = load(plan)
        if isinstance(plan, Model):
            plan = plan.partition(**partition_args)
        elif partition_args:
            raise InvalidArgumentError(
                f"unexpected argument(s) {', '.join(partition_args)} for a Plan")
        self.plan: Plan = plan
        self._native = _vkpipe.Pipeline(plan._native, ring_depth, sequential,
                                        threads, trace_capacity)
        self.inputs: List[TensorSpec] = _specs(self._native.input_specs())
        self.outputs: List[str] = self._native.output_names()
        self._trace_capacity = trace_capacity
        self._submit_lock = threading.Lock()   # the producer side
        self._collect_lock = threading.Lock()  # whoever calls get_output
        self._lock = threading.Lock()          # guards the dicts and flags below
        self._cond = threading.Condition(self._lock)  # results() waits on it
        self._iter_waiting = 0                 # results() callers waiting
        self._pending: Dict[int, Frame] = {}   # submitted, result not in
        self._early: Dict[int, tuple] = {}     # results that beat submit's bookkeeping
        self._unclaimed: "collections.OrderedDict[int, Frame]" = collections.OrderedDict()
        self._input_ended = False
        self._closing = False
        self._mapping = False                  # a map() is streaming
        self._closed_event = threading.Event()

    # -- lifetime -----------------------------------------------------------
    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def close(self) -> None:
        """Stops the workers and frees the pipeline. Frames still in flight
        are cancelled: their result() raises :class:`CancelledError`.
        Idempotent."""
        if self._native.closed:
            return
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        # A collector waiting in get_output looks at _closing every _POLL_S.
        with self._collect_lock, self._submit_lock:
            while not self._native.closed:
                try:
                    self._native.close()
                except StateError:  # a drain() under way: it returns within _POLL_S
                    time.sleep(0.005)
            with self._cond:
                pending = list(self._pending.values())
                self._pending.clear()
                self._early.clear()
                self._cond.notify_all()
            for frame in pending:
                frame._finish(None, CancelledError(
                    f"frame {frame.seq}: the pipeline was closed before it finished"),
                    None, self.outputs)
        self._closed_event.set()

    # -- synchronous --------------------------------------------------------
    def infer(self, inputs: Optional[Mapping[str, Any]] = None, /,
              **kw_inputs: Any) -> Dict[str, Any]:
        """Runs one frame and waits for it: inputs by name (a mapping and/or
        keywords), outputs as a dict of NumPy arrays. Needs no frames in
        flight."""
        if inputs is None:
            named = kw_inputs
        elif kw_inputs or type(inputs) is not dict:
            named = dict(inputs, **kw_inputs)
        else:
            named = inputs
        if self._mapping:
            raise StateError("infer: a map() is streaming through this pipeline")
        with self._submit_lock:
            return self._native.infer_named(named)

    # -- asynchronous -------------------------------------------------------
    def submit(self, inputs: Optional[Mapping[str, Any]] = None, /,
               **kw_inputs: Any) -> Frame:
        """Launches a frame (blocks only while the input rings are full) and
        returns its :class:`Frame`. The inputs are copied: the arrays may be
        reused as soon as this returns."""
        if inputs is None:
            named = kw_inputs
        elif kw_inputs or type(inputs) is not dict:
            named = dict(inputs, **kw_inputs)
        else:
            named = inputs
        if self._mapping:
            raise StateError("submit: a map() is streaming through this pipeline")
        with self._submit_lock:
            if self._closing:
                raise StateError("the pipeline is closed")
            seq = self._native.submit_named(named)
            frame = Frame(self, seq)
            with self._lock:
                early = self._early.pop(seq, None) if self._early else None
                if early is None:
                    self._pending[seq] = frame
                self._unclaimed[seq] = frame
                if self._iter_waiting:
                    self._cond.notify_all()
        if early is not None:
            frame._finish(early[1], early[2], early[3], self.outputs)
        return frame

    def end_input(self) -> None:
        """Says no more frames will be submitted: ``results()`` ends once
        every submitted frame has been yielded."""
        with self._cond:
            self._input_ended = True
            self._cond.notify_all()

    def results(self, timeout: Optional[float] = None) -> Iterator[Frame]:
        """Yields every submitted frame whose result no one has asked for,
        in order, once it is done. Waits for the producer; ends after
        :meth:`end_input` (or close) once all have been yielded."""
        while True:
            with self._cond:
                while not self._unclaimed and not self._input_ended and not self._closing:
                    self._iter_waiting += 1
                    try:
                        self._cond.wait()
                    finally:
                        self._iter_waiting -= 1
                if not self._unclaimed:
                    return
                _, frame = self._unclaimed.popitem(last=False)
            if not frame._done:
                frame._wait(timeout)
            yield frame

    def map(self, inputs: Iterable[Mapping[str, Any]]) -> Iterator[Dict[str, Any]]:
        """Streams ``inputs`` (an iterable of input mappings) through the
        pipeline and yields each frame's outputs in order, like
        ``Executor.map``: a producer thread submits while the caller's loop
        takes results. The lean path for serving loops (no :class:`Frame`
        per frame). A failing frame raises its error at its place in the
        stream, ending it. While the iteration runs (until it ends or the
        generator is closed), ``infer`` and ``submit`` raise
        :class:`StateError`; frames from :meth:`submit` must all have been
        taken before it starts. ``close()`` may be called at any time."""
        with self._lock:
            if self._pending or self._unclaimed:
                raise StateError("map: frames from submit() are still to be taken")
            if self._mapping:
                raise StateError("map: the pipeline is already streaming")
            self._mapping = True
        native, names = self._native, self.outputs
        done = threading.Event()
        stop: List[bool] = []
        sent = [0]
        failure: List[BaseException] = []

        def produce() -> None:
            try:
                with self._submit_lock:
                    for item in inputs:
                        if stop:
                            break
                        if self._closing:
                            failure.append(CancelledError("map: the pipeline was closed"))
                            break
                        native.submit_named(item if type(item) is dict else dict(item))
                        sent[0] += 1
            except BaseException as e:  # handed to the consumer below
                failure.append(e)
            finally:
                done.set()

        def take() -> Optional[tuple]:
            if self._closing:
                raise CancelledError("map: the pipeline was closed")
            try:
                return native.get_output(self._POLL_S)
            except StateError:
                if self._closing:
                    raise CancelledError("map: the pipeline was closed") from None
                raise

        producer = threading.Thread(target=produce, name="vkpipe-map", daemon=True)
        received = 0
        try:
            producer.start()
            while not (done.is_set() and received == sent[0]):
                result = take()
                if result is None:
                    continue
                received += 1
                if result[2] is not None:
                    raise result[2]
                yield dict(zip(names, result[1]))
            if failure:
                raise failure[0]
        finally:
            stop.append(True)
            if producer.is_alive():
                producer.join()
            # Frames still in flight (the stream was cut short) are taken and
            # dropped, so that the pipeline is clean afterwards.
            try:
                while received < sent[0]:
                    if take() is not None:
                        received += 1
            except CancelledError:
                pass
            finally:
                with self._lock:
                    self._mapping = False

    def drain(self, timeout: Optional[float] = None) -> None:
        """Waits until every submitted frame has finished (results stay to
        be taken); :class:`TimeoutError` after ``timeout`` seconds."""
        if timeout is not None and not timeout >= 0:
            raise InvalidArgumentError(f"drain: timeout must be >= 0 seconds or None, got {timeout}")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._closing:
                raise CancelledError("drain: the pipeline was closed")
            chunk = self._POLL_S
            if deadline is not None:
                chunk = min(chunk, max(0.0, deadline - time.monotonic()))
            try:
                self._native.drain(chunk)
                return
            except TimeoutError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    def _claim(self, seq: int) -> None:
        with self._lock:
            self._unclaimed.pop(seq, None)

    def _deliver(self, result: tuple) -> None:
        seq = result[0]
        with self._lock:
            frame = self._pending.pop(seq, None)
            if frame is None:
                self._early[seq] = result
                return
        frame._finish(result[1], result[2], result[3], self.outputs)

    def _collect(self, frame: Frame, timeout: Optional[float]) -> None:
        if timeout is not None and not timeout >= 0:
            raise InvalidArgumentError(f"timeout must be >= 0 seconds or None, got {timeout}")
        deadline = None if timeout is None else time.monotonic() + timeout
        while not frame._done:
            if self._closing:
                self._closed_event.wait()  # close() cancels every pending frame
                continue
            wait = -1 if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._collect_lock.acquire(timeout=wait):
                raise TimeoutError(f"frame {frame.seq}: not done after {timeout} s")
            try:
                while not frame._done and not self._closing:
                    chunk = self._POLL_S
                    if deadline is not None:
                        chunk = min(chunk, max(0.0, deadline - time.monotonic()))
                    result = self._native.get_output(chunk)
                    if result is not None:
                        self._deliver(result)
                    elif deadline is not None and time.monotonic() >= deadline:
                        raise TimeoutError(f"frame {frame.seq}: not done after {timeout} s")
            finally:
                self._collect_lock.release()

    # -- introspection ------------------------------------------------------
    def stats(self) -> Dict[str, Any]:
        """Counters since creation: per stage (frames, busy and wait
        milliseconds), per binding (ring depth, peak occupancy), frames run,
        finished and failed, latency min/mean/max in milliseconds."""
        return self._native.stats()

    def trace(self, path: PathLike) -> int:
        """Writes the recorded stage events as a Chrome trace (open it in
        Perfetto or chrome://tracing) and returns how many there were.
        Needs ``trace_capacity`` > 0 at creation."""
        if self._trace_capacity <= 0:
            raise StateError("trace: create the pipeline with trace_capacity > 0 "
                             "(events per stage and frame to keep)")
        events = self._native.trace()
        t0 = min((e[2] for e in events), default=0)
        out: List[Dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
             "args": {"name": self.plan.name}}]
        for i, s in enumerate(self.plan.stages):
            out.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": i + 1,
                        "args": {"name": f"{s.name} ({s.target})"}})
        for stage, seq, start, end, failed in events:
            out.append({"name": f"frame {seq}", "cat": "failed" if failed else "frame",
                        "ph": "X", "pid": 1, "tid": stage + 1,
                        "ts": (start - t0) / 1e3, "dur": (end - start) / 1e3,
                        "args": {"seq": seq}})
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump({"displayTimeUnit": "ms", "traceEvents": out}, f)
        return len(events)
