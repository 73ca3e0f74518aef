"""The evaluation worker: ``python -m ucutlass_torch.worker`` (protocol: protocol.py's docstring).

One persistent process per GPU (the client sets CUDA_VISIBLE_DEVICES). It holds the loaded
problem, the fp32 reference Model built under seed 42, the problem's memory plan (memplan) and
the L2-flush buffer, so evaluating a candidate costs only its trials and timing; whatever a
candidate allocated is released when its evaluation ends, whatever a problem held when the next
one loads (small problems are kept for their next load: KEEP_ONE_BYTES). The :class:`Worker` class is the whole logic and is used directly by the CPU tests
with stand-in kernels (kernel.PyKernel).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

import torch

from . import baselines, correctness, guard, kernel, memplan, protocol, timing, tmpdirs
from .loader import ProblemError, build_model, load_problem, make_inputs

MODEL_SEED = 42
TIMING_SEED = 42
# Runs of ucut_run_timed per evaluated candidate (the per-stage profile's median; each after an
# L2 flush, as a timed repetition).
PROFILE_REPS = 3

# Problems kept loaded when the worker moves on to another: a suite's scheduler alternates among
# problems, and run CU spent 37 s of its 354 GPU-held seconds on 292 loads (building the model,
# measuring its memory). A problem whose parameters and buffers take at most KEEP_ONE_BYTES is
# kept, the least recently used dropped past KEEP_TOTAL_BYTES; a load of a kept problem (same
# file, same bytes, same seed) takes it back with its memory plan. The model is the same object
# a run of consecutive evaluations already shares: its state is fingerprinted around every
# candidate run (guard), and a candidate that changed it has it built again.
# The kb suite's 13 fused Linears hold 256 MiB of weights each (8192 x 8192 fp32 and a bias): at
# 512 MiB they are kept too, and the total is at most 4 GiB or a sixteenth of the device (5 GiB of
# an 80 GB H100), so what is kept never decides whether a problem's memory plan fits (and where it
# would, load() drops it and plans again).
KEEP_ONE_BYTES = 512 << 20
KEEP_TOTAL_BYTES = 4 << 30


def _set_reference_precision() -> None:
    # The contract's reference: fp32 with PyTorch's defaults (matmul TF32 off, cuDNN TF32 on).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("highest")


def _smi_lines(args: List[str], gpu: str) -> List[str]:
    """nvidia-smi's non-empty output lines for ``gpu`` (an index or a UUID; nvidia-smi ignores
    CUDA_VISIBLE_DEVICES, so a worker names its GPU by UUID); none when it is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, *args, "-i", gpu], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return [r.strip() for r in out.stdout.splitlines() if r.strip()] if out.returncode == 0 else []


def _nvidia_smi(query: str, gpu: str = "0") -> str:
    """One nvidia-smi reading of ``gpu``."""
    lines = _smi_lines([f"--query-gpu={query}", "--format=csv,noheader,nounits"], gpu)
    return lines[0] if lines else ""


class Nvml:
    """The two readings a baseline takes while the GPU worker is held (the SM clock, and how many
    processes hold a context on the GPU), through NVML itself (libnvidia-ml, which nvidia-smi
    reads too) instead of an nvidia-smi process each: about 22 ms a process on the H100 of
    docs/benchmarks.md (run CM) against 0.02 ms a reading, three of them a measured baseline, all
    while every other problem waits for the worker.
    Any NVML failure (no library, an old driver without the entry point, an unknown GPU) makes the
    caller fall back to nvidia-smi. ``lib`` replaces the library (tests)."""

    SUCCESS, INSUFFICIENT_SIZE, CLOCK_SM = 0, 7, 1

    def __init__(self, lib: Any = None):
        self.lib = lib
        self.failed = False
        self.handles: Dict[str, Any] = {}

    def _lib(self) -> Any:
        if self.lib is None and not self.failed:
            try:
                lib = ctypes.CDLL("libnvidia-ml.so.1")
                if lib.nvmlInit_v2() != self.SUCCESS:
                    raise OSError("nvmlInit_v2 failed")
                self.lib = lib
            except (OSError, AttributeError):
                self.failed = True
        return None if self.failed else self.lib

    def _handle(self, gpu: str) -> Any:
        lib = self._lib()
        if lib is None:
            return None
        if gpu not in self.handles:
            handle = ctypes.c_void_p()
            try:
                if gpu.startswith("GPU-"):
                    rc = lib.nvmlDeviceGetHandleByUUID(gpu.encode(), ctypes.pointer(handle))
                else:
                    rc = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(int(gpu)), ctypes.pointer(handle))
            except (AttributeError, ValueError):
                rc = -1
            self.handles[gpu] = handle if rc == self.SUCCESS else None
        return self.handles[gpu]

    def sm_clock_mhz(self, gpu: str) -> Optional[str]:
        """The SM clock now, in MHz, as nvidia-smi's clocks.sm prints it; None when NVML cannot say."""
        handle = self._handle(gpu)
        if handle is None:
            return None
        mhz = ctypes.c_uint()
        try:
            rc = self.lib.nvmlDeviceGetClockInfo(handle, ctypes.c_int(self.CLOCK_SM), ctypes.pointer(mhz))
        except AttributeError:
            return None
        return str(mhz.value) if rc == self.SUCCESS else None

    def compute_processes(self, gpu: str) -> Optional[int]:
        """How many processes hold a compute context on ``gpu`` (nvidia-smi's compute apps); None
        when NVML cannot say. Asked with no room for the list, NVML answers with the count alone."""
        handle = self._handle(gpu)
        if handle is None:
            return None
        for name in ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                     "nvmlDeviceGetComputeRunningProcesses"):
            fn = getattr(self.lib, name, None)
            if fn is None:
                continue
            count = ctypes.c_uint(0)
            rc = fn(handle, ctypes.pointer(count), None)
            if rc in (self.SUCCESS, self.INSUFFICIENT_SIZE):
                return int(count.value)
            return None
        return None


_NVML = Nvml()


def sm_clock_mhz(gpu: str = "0", nvml: Optional[Nvml] = None) -> str:
    """The SM clock of ``gpu`` now (MHz; "" when neither NVML nor nvidia-smi can say)."""
    mhz = (nvml or _NVML).sm_clock_mhz(gpu)
    return mhz if mhz is not None else _nvidia_smi("clocks.sm", gpu)


def other_gpu_processes(gpu: str = "0", nvml: Optional[Nvml] = None) -> int:
    """How many processes besides this one hold a CUDA context on ``gpu`` (the compute apps less
    one for this worker; 0 when none are listed, e.g. in a container that hides them, or neither
    NVML nor nvidia-smi can say)."""
    n = (nvml or _NVML).compute_processes(gpu)
    if n is None:
        n = len(_smi_lines(["--query-compute-apps=pid", "--format=csv,noheader"], gpu))
    return max(0, n - 1)


def smi_id(props: Any) -> str:
    """nvidia-smi's name for the GPU behind ``props``: its UUID when torch reports one, else 0."""
    uuid = str(getattr(props, "uuid", "") or "")
    if not uuid:
        return "0"
    return uuid if uuid.startswith("GPU-") else "GPU-" + uuid


def environment(device: torch.device) -> Dict[str, Any]:
    env: Dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda or "",
                           "python": platform.python_version(), "device": str(device), "pid": os.getpid(),
                           "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
                           "cudnn_tf32": torch.backends.cudnn.allow_tf32,
                           "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        gpu = smi_id(props)
        env.update(gpu=props.name, sm=f"{props.major}{props.minor}", l2_bytes=int(getattr(props, "L2_cache_size", 0)),
                   driver=_nvidia_smi("driver_version", gpu), sm_clock_mhz=sm_clock_mhz(gpu),
                   sm_clock_max_mhz=_nvidia_smi("clocks.max.sm", gpu), smi_gpu=gpu)
    else:
        env.update(gpu="cpu", sm="", l2_bytes=0, driver="", sm_clock_mhz="", sm_clock_max_mhz="")
    return env


class Worker:
    def __init__(self, device: Optional[str] = None):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        if self.device.type == "cuda":
            index = self.device.index if self.device.index is not None else torch.cuda.current_device()
            self.device = torch.device("cuda", index)
            torch.cuda.set_device(index)
        _set_reference_precision()
        self.env = environment(self.device)
        if self.device.type == "cuda":
            # The fused checks compile (once a machine, cached) and pass their self-test here, at
            # start-up, not inside the first evaluation's time (docs/eval-contract.md).
            self.env["fused_checks"] = correctness._fused_library(self.device) is not None
        self.loaded = None
        self.model = None
        self.problem_info: Dict[str, Any] = {}
        self.memory: Optional[memplan.MemoryPlan] = None
        self.flusher = None
        # Private copies of the libraries it loads (open_kernel), each removed once loaded; the
        # folder goes when the worker does, or at the next worker's start if this one was killed.
        self.tmpdir = tmpdirs.private_dir(self, "ucut-worker")
        self.n_loaded = 0
        self.fatal = False
        self._model64 = None  # the float64 model, built once per evaluation when first needed
        self.key = None  # the loaded problem's (file, size, mtime, seed)
        # key -> (loaded, model, memory plan, problem_info, bytes), least recently used first
        self.kept: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()
        self.kept_hits = 0

    # -- requests -------------------------------------------------------------------------------
    def handle(self, req: Dict[str, Any]) -> Dict[str, Any]:
        rid = req.get("id")
        cmd = req["cmd"]
        try:
            if cmd == "ping":
                return protocol.ok(rid, env=self.env, protocol=protocol.PROTOCOL_VERSION)
            if cmd == "load_problem":
                path = protocol.field(req, "problem", str, required=True)
                seed = protocol.field(req, "seed", int, MODEL_SEED)
                return protocol.ok(rid, problem=self.load(path, seed))
            if cmd == "evaluate":
                self._need_problem()
                so = protocol.field(req, "so", str, required=True)
                result = self.evaluate_path(
                    so, profile=protocol.field(req, "profile", str, "default"),
                    trials=protocol.field(req, "trials", int, correctness.MIN_TRIALS),
                    rescaled=protocol.field(req, "rescaled", bool, True),
                    do_timing=protocol.field(req, "timing", bool, True),
                    min_reps=protocol.field(req, "min_reps", int, timing.MIN_REPS),
                    target_s=protocol.field(req, "target_s", float, timing.TARGET_S),
                    scalars=protocol.field(req, "scalars", list, None),
                    profile_stages=protocol.field(req, "profile_stages", bool, True))
                return protocol.ok(rid, result=result, fatal=self.fatal)
            if cmd == "baseline":
                self._need_problem()
                modes = protocol.field(req, "modes", list, ["eager", "compile"])
                cache_dir = protocol.field(req, "cache_dir", str, None)
                out = self.baselines(modes, cache_dir, protocol.field(req, "min_reps", int, timing.MIN_REPS))
                # Modes a suite puts off (torch.compile's) are answered now when a run before measured them.
                for mode in protocol.field(req, "cached_only", list, []):
                    hit = None if mode in out or self.device.type != "cuda" else baselines.cached(
                        self.loaded.source_sha256, self.env.get("gpu", ""), mode, cache_dir)
                    if hit is not None:
                        out[mode] = hit
                return protocol.ok(rid, baselines=out, fatal=self.fatal)
            if cmd == "shutdown":
                return protocol.ok(rid)
        except protocol.RequestError as e:
            return protocol.error(rid, str(e))
        except ProblemError as e:
            return protocol.error(rid, str(e))
        except ValueError as e:
            return protocol.error(rid, str(e))
        return protocol.error(rid, f"unhandled cmd {cmd!r}")

    def _need_problem(self) -> None:
        if self.model is None:
            raise protocol.RequestError("no problem loaded: send {\"cmd\": \"load_problem\", \"problem\": PATH} first")

    @staticmethod
    def _key(path: str, seed: int) -> Optional[tuple]:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns, seed)

    @staticmethod
    def _model_bytes(model: Any) -> int:
        tensors = list(model.parameters()) + list(model.buffers()) if isinstance(model, torch.nn.Module) else []
        return sum(t.numel() * t.element_size() for t in tensors)

    def _keep_current(self) -> None:
        """The loaded problem into ``kept`` when it is small (KEEP_ONE_BYTES), else dropped."""
        if self.model is None or self.key is None or self.fatal or self.memory is None or not self.memory.fits:
            return
        size = self._model_bytes(self.model)
        if size > KEEP_ONE_BYTES:
            return
        self.kept[self.key] = (self.loaded, self.model, self.memory, self.problem_info, size)
        self.kept.move_to_end(self.key)
        limit = KEEP_TOTAL_BYTES
        if self.device.type == "cuda":
            limit = min(limit, memplan.device_memory(self.device)[1] // 16)
        while sum(e[4] for e in self.kept.values()) > limit:
            self.kept.popitem(last=False)

    def drop_kept(self) -> None:
        """Every kept problem released, its memory given back (before a problem whose memory
        they could crowd)."""
        self.kept.clear()
        memplan.release(self.device, collect=True)

    def load(self, path: str, seed: int = MODEL_SEED) -> Dict[str, Any]:
        """Loads a problem, runs its eager forward once to measure it, and plans the memory of its
        evaluation (memplan). A file that does not load leaves the previous problem in place;
        otherwise the previous problem is kept (KEEP_ONE_BYTES) or released before the new model
        is built, and the kept problems are released only where the new one's memory plan does not
        fit beside them. A problem kept from before comes back as it was, without a build."""
        key = self._key(path, seed)
        if key is not None and key == self.key and self.model is not None:
            self.kept_hits += 1
            return dict(self.problem_info, kept=True)
        if key is not None and key in self.kept:
            self._keep_current()
            self.loaded, self.model, self.memory, self.problem_info, _ = self.kept.pop(key)
            self.key, self.seed, self._model64 = key, seed, None
            self.kept_hits += 1
            return dict(self.problem_info, kept=True)
        loaded = load_problem(path)
        had_problem = self.loaded is not None
        self._keep_current()
        self.loaded = self.model = self.memory = None
        self.key = None
        memplan.release(self.device, collect=had_problem)
        self.loaded = loaded
        try:
            self.model = build_model(self.loaded, seed=seed, device=str(self.device))
        except torch.cuda.OutOfMemoryError as e:
            if self.kept:  # the kept problems first: then the model alone
                self.drop_kept()
                return self.load(path, seed)
            self.loaded = None
            raise protocol.RequestError(f"{path}: the model's parameters do not fit in GPU memory "
                                        f"({str(e).strip().splitlines()[0]}); free the GPU or use one with more memory")
        self.seed = seed

        def measure_and_plan() -> memplan.Measured:
            m = memplan.measure(self.model, lambda: self.inputs(TIMING_SEED), self.device)
            memplan.release(self.device, collect=False)
            self.memory = self._plan(m)
            return m

        m = measure_and_plan()
        if self.kept and not self.memory.fits:
            # The kept problems' parameters (at most KEEP_TOTAL_BYTES) may be what the plan lacks:
            # planned again with the device to itself. They stay kept otherwise, also across a large
            # problem's load (the kb suite's 13 fused Linears hold 256 MiB each: dropping the kept
            # ones at each of their loads made breadth's alternation reload the small problems).
            self.drop_kept()
            m = measure_and_plan()
        self.key = key
        self.problem_info = {
            "name": self.loaded.name, "path": self.loaded.path, "source_sha256": self.loaded.source_sha256,
            "doc": self.loaded.doc, "seed": seed,
            "inputs": [{"shape": shape, "dtype": kernel.dtype_name(dt)} for shape, dt in m.inputs],
            "outputs": [{"shape": shape, "dtype": kernel.dtype_name(dt)} for shape, dt in m.outputs],
            "memory": self.memory.to_json(),
        }
        return self.problem_info

    def _plan(self, m: memplan.Measured) -> memplan.MemoryPlan:
        free, total = memplan.device_memory(self.device)
        cuda = self.device.type == "cuda"
        where = "GPU" if cuda else "host"
        if m.error:
            return memplan.forward_refusal(m.sizes, free, total, m.error, where)
        flush = timing.flush_bytes(self.device) if cuda and self.flusher is None else 0
        # On a GPU the reference's outputs move to the host; on a CPU they are there already.
        host = memplan.host_available() if cuda else 0
        return memplan.plan(m.sizes, free, total, host, flush, correctness.scratch_bytes(), where,
                            memplan.guard_bytes(len(m.outputs)))

    def inputs(self, seed: int) -> List[Any]:
        return make_inputs(self.loaded, seed=seed, device=str(self.device))

    def reference(self, inputs: List[Any]) -> Any:
        with torch.no_grad():
            return self.model(*inputs)

    def reference64(self, inputs: List[Any]) -> Any:
        """The reference model in float64 on (widened) ``inputs``: the reference-class pass and the
        diagnosis of a mismatch (correctness.judge). The float64 model is built on first use within
        an evaluation and dropped when it ends. Where its parameters (a copy, then widened), the
        widened inputs and the widened forward would not fit in free memory it raises MemoryError,
        which the check reports instead (no float64 pass, no diagnosis numbers)."""
        import copy

        s = self.memory.sizes
        need = 2 * (s.inputs + s.forward_peak) + (3 * s.params if self._model64 is None else 0)
        free, _ = memplan.device_memory(self.device)
        if need > free * (1 - memplan.HEADROOM):
            raise MemoryError(f"the float64 model and forward need about {memplan.gib(need)}, "
                              f"{memplan.gib(free)} is free")
        if self._model64 is None:
            self._model64 = copy.deepcopy(self.model).double()
        with torch.no_grad():
            return self._model64(*inputs)

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def stream(self):
        return torch.cuda.current_stream(self.device) if self.device.type == "cuda" else None

    # -- evaluation -----------------------------------------------------------------------------
    def open_kernel(self, so: str):
        # dlopen returns the already-loaded handle for a path it has seen, so a rebuilt library
        # at the same path would be ignored: load a private copy under a fresh name instead.
        self.n_loaded += 1
        if not os.path.exists(so):
            raise kernel.KernelError(f"{so}: no such kernel library")
        copy = os.path.join(self.tmpdir, f"{self.n_loaded}_{os.path.basename(so)}")
        shutil.copyfile(so, copy)
        try:
            return kernel.CtypesKernel(copy)
        finally:
            # A loaded library stays mapped after its file is gone: nothing is left in /tmp per
            # candidate (a suite evaluates hundreds, each a copy of up to a few MB).
            with contextlib.suppress(OSError):
                os.unlink(copy)

    def evaluate_path(self, so: str, **kw) -> Dict[str, Any]:
        t0 = time.perf_counter()
        try:
            k = self.open_kernel(so)
        except kernel.KernelError as e:
            return self._result("launch_error", "load", str(e), t0=t0)
        return self.evaluate(k, **kw)

    def evaluate(self, k: Any, **kw) -> Dict[str, Any]:
        """One candidate under the contract (:meth:`_evaluate`); what it allocated, passing or
        failing, is released before the next."""
        try:
            return self._evaluate(k, **kw)
        finally:
            self._model64 = None
            memplan.release(self.device, collect=False)

    def _evaluate(self, k: Any, profile: str = "default", trials: int = correctness.MIN_TRIALS,
                  rescaled: bool = True, do_timing: bool = True, min_reps: int = timing.MIN_REPS,
                  target_s: float = timing.TARGET_S, scalars: Optional[list] = None,
                  profile_stages: bool = True) -> Dict[str, Any]:
        t0 = time.perf_counter()
        correctness.tolerance(profile, torch.float32)
        info = {key: k.describe.get(key) for key in ("name", "program_hash", "abi", "ucutlass", "cutlass", "arch", "stages")}
        if not self.memory.fits:
            return self._result("launch_error", "memory", self.memory.message, kernel_info=info, t0=t0)
        # On a GPU the reference's outputs move to host memory, out of any kernel's reach, or, when
        # they are large (memplan.STASH_MAX_BYTES), are made again after each candidate run.
        ref_home = None if self.device.type != "cuda" else "after" if self.memory.keep_on == "after" else "cpu"
        phase = "bind"
        # Seconds by phase (correctness.PhaseClock), in the result's "seconds" beside "total".
        clock = correctness.PhaseClock(self.sync)
        try:
            with clock.phase("bind"):
                bound = kernel.bind(k, self.model, self.device, scalars)
        except kernel.BindError as e:
            return self._result("mismatch", phase, f"binding the kernel to the problem: {e}", kernel_info=info, t0=t0,
                                seconds=clock.seconds)
        stream = self.stream()
        state = guard.named_state(self.model)

        def guarded(launch: Callable[[], Any]) -> Any:
            """A candidate's launch, then (synchronized) the guard zones around its buffers and the
            reference model's state: a write outside its outputs raises guard.OutOfBounds."""
            with clock.phase("guards"):
                snap = guard.snapshot(state, correctness.fingerprints)
            out = launch()
            self.sync()
            with clock.phase("guards"):
                bound.check_guards()
                bad = guard.changed(state, snap, correctness.fingerprints)
            if bad:
                raise guard.OutOfBounds(f"rejected: wrote outside its outputs: the reference model's {', '.join(bad[:4])}"
                                        f"{' and more' if len(bad) > 4 else ''} changed while the candidate ran")
            return out

        def candidate(inputs: List[Any]) -> List[torch.Tensor]:
            return guarded(lambda: bound.run(bound.check_inputs(inputs), stream))

        seconds = clock.seconds
        report = None
        stats = None
        stage_ms = None
        try:
            phase = "correctness"
            report = correctness.check(self.reference, candidate, self.inputs, profile=profile, trials=trials,
                                       rescaled=rescaled, determinism=True, sync=self.sync,
                                       reference64=self.reference64, ref_home=ref_home, clock=clock)
            if not report.passed:
                return self._result("mismatch", phase, report.message, kernel_info=info, corr=report, t0=t0,
                                    seconds=seconds)
            if do_timing:
                phase = "timing"
                with clock.phase("inputs"):
                    tin = bound.check_inputs(self.inputs(TIMING_SEED))
                launch = bound.launcher(tin, stream)
                if self.device.type == "cuda" and self.flusher is None:
                    self.flusher = timing.L2Flusher(self.device)
                kw = {"min_reps": min_reps, "target_s": target_s}
                if self.device.type == "cuda":
                    kw["flusher"] = self.flusher
                # Outputs are overwritten with NaN before every repetition, outside the timed
                # events: no repetition can reuse what an earlier one left.
                with clock.phase("timing"):
                    stats = guarded(lambda: timing.time_fn(launch, self.device, prepare=bound.poison_outputs, **kw))
                del launch, tin
                phase = "recheck"
                with clock.phase("recheck"):
                    recheck = correctness.recheck(bound.outputs, self.reference, self.inputs, TIMING_SEED, profile,
                                                  sync=self.sync, reference64=self.reference64)
                report.recheck = recheck
                if not recheck["passed"]:
                    report.passed_by = ""
                    return self._result("mismatch", phase, recheck["message"], kernel_info=info, corr=report,
                                        stats=stats, t0=t0, seconds=seconds)
                if recheck["passed_by"] == "float64":
                    report.passed_by = "float64"
                if profile_stages and len(k.describe.get("stages") or []) > 1 and bound.times_stages:
                    # Where the time goes (docs/eval-contract.md, "Per-stage times"): a profile
                    # beside the timed result, after every verdict; a crash here is the kernel's.
                    phase = "profile"
                    with clock.phase("inputs"):
                        tin = bound.check_inputs(self.inputs(TIMING_SEED))
                    flush = self.flusher.flush if self.flusher is not None else None
                    with clock.phase("profile"):
                        ms = guarded(lambda: bound.stage_times(tin, stream, reps=PROFILE_REPS, prepare=flush))
                    del tin
                    stage_ms = [{"stage": st.get("name", ""), "kind": st.get("kind", ""),
                                 "config": st.get("config", ""), "ms": t}
                                for st, t in zip(k.describe.get("stages") or [], ms)]
            phase = "done"
            result = self._result("ok", phase, "", kernel_info=info, corr=report, stats=stats, t0=t0, seconds=seconds)
            if do_timing and stage_ms is not None:
                result["stage_ms"] = stage_ms
            return result
        except guard.OutOfBounds as e:
            # Whatever else the write reached is unknown: the reference model is built again.
            self._rebuild_model()
            return self._result("rejected", phase, str(e), kernel_info=info, corr=report, stats=stats, t0=t0,
                                seconds=seconds)
        except kernel.BindError as e:
            return self._result("mismatch", phase, f"binding the kernel's inputs: {e}", kernel_info=info, corr=report,
                                t0=t0, seconds=seconds)
        except kernel.KernelError as e:
            self._check_context()
            return self._result("launch_error", phase, str(e), kernel_info=info, corr=report, t0=t0, seconds=seconds)
        except torch.cuda.OutOfMemoryError as e:  # evaluate() releases the memory on the way out
            return self._result("launch_error", phase, f"out of memory: {str(e).splitlines()[0]}", kernel_info=info,
                                corr=report, t0=t0, seconds=seconds)
        except RuntimeError as e:
            self._check_context()
            msg = str(e).strip().splitlines()
            text = " ".join(m for m in msg[:3] if m) or type(e).__name__
            return self._result("launch_error", phase, text, kernel_info=info, corr=report, t0=t0, seconds=seconds)

    def _rebuild_model(self) -> None:
        """The reference model built again (after a candidate wrote outside its outputs); a
        context lost meanwhile makes the worker fatal instead."""
        self._check_context()
        if self.fatal:
            return
        self.model = self._model64 = None
        memplan.release(self.device, collect=True)
        self.model = build_model(self.loaded, seed=self.seed, device=str(self.device))

    def _check_context(self) -> None:
        """After a failure, is the CUDA context still usable? An illegal address or a trap leaves
        it poisoned for good: the worker must then be replaced."""
        if self.device.type != "cuda":
            return
        try:
            torch.cuda.synchronize(self.device)
            torch.ones(1, device=self.device).add_(1).item()
        except Exception:  # noqa: BLE001 - any failure here means the context is gone
            self.fatal = True

    def _result(self, verdict: str, phase: str, error: str, kernel_info=None, corr=None, stats=None, t0=0.0,
                seconds=None) -> Dict[str, Any]:
        seconds = dict(seconds or {})
        seconds["total"] = time.perf_counter() - t0
        return {"verdict": verdict, "phase": phase, "error": error, "kernel": kernel_info or {},
                "correctness": corr.to_json() if corr is not None else None,
                "timing": stats.to_json() if stats is not None else None, "seconds": seconds}

    def baselines(self, modes: List[str], cache_dir: Optional[str], min_reps: int = timing.MIN_REPS) -> Dict[str, Any]:
        """The baselines' timings (baselines.measure); a problem whose evaluation cannot fit is
        refused, as its candidates are. The compiled models, their graphs and the inputs are
        released afterwards."""
        if not self.memory.fits:
            raise protocol.RequestError(self.memory.message)
        try:
            return self._baselines(modes, cache_dir, min_reps)
        finally:
            if any(m != "eager" for m in modes):
                torch._dynamo.reset()
            memplan.release(self.device)

    def _baselines(self, modes: List[str], cache_dir: Optional[str], min_reps: int) -> Dict[str, Any]:
        inputs = self.inputs(TIMING_SEED)
        out = {}
        for mode in modes:
            kw: Dict[str, Any] = {"min_reps": min_reps}
            if self.device.type == "cuda":
                if self.flusher is None:
                    self.flusher = timing.L2Flusher(self.device)
                kw["flusher"] = self.flusher
            clock = (lambda: sm_clock_mhz(self.env.get("smi_gpu", "0"))) if self.device.type == "cuda" else None
            others = (lambda: other_gpu_processes(self.env.get("smi_gpu", "0"))) if self.device.type == "cuda" else None
            out[mode] = baselines.measure(self.model, inputs, mode, self.device, self.loaded.source_sha256,
                                          self.env.get("gpu", ""), cache_dir if self.device.type == "cuda" else None,
                                          read_clock=clock, others=others, **kw)
            self._check_context()
        return out


def serve(inp, out, worker_factory: Callable[[], Worker] = Worker) -> int:
    worker = None
    for line in inp:
        line = line.strip()
        if not line:
            continue
        req, err = protocol.parse_request(line)
        if err:
            protocol.send(out, protocol.error(req.get("id") if isinstance(req, dict) else None, err))
            continue
        if worker is None:
            try:
                worker = worker_factory()
            except Exception as e:  # noqa: BLE001 - report start-up failures on the protocol
                protocol.send(out, protocol.error(req.get("id"), f"worker start-up failed: {type(e).__name__}: {e}"))
                return 3
        try:
            resp = worker.handle(req)
        except Exception as e:  # noqa: BLE001 - a harness bug must not kill the worker silently
            traceback.print_exc(file=sys.stderr)
            resp = protocol.error(req.get("id"), f"internal error in the worker: {type(e).__name__}: {e}")
            worker._check_context()
            resp["fatal"] = worker.fatal
        protocol.send(out, resp)
        if req["cmd"] == "shutdown" or worker.fatal:
            return 0 if req["cmd"] == "shutdown" else 4
    return 0


def main() -> int:
    # Keep the protocol stream private: fd 1 becomes stderr for everything else in the process.
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out = os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)
    device = os.environ.get("UCUTLASS_WORKER_DEVICE") or None
    code = serve(sys.stdin, out, lambda: Worker(device))
    out.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: after a CUDA fault, destructors can hang or crash.
    os._exit(code)


if __name__ == "__main__":
    main()
