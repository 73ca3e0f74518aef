"""The GPU readings a baseline takes (worker.sm_clock_mhz, worker.other_gpu_processes) come from
NVML when it answers and from nvidia-smi otherwise. NVML here is a stand-in library object whose
entry points write through the pointers they are given, as libnvidia-ml's do."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import worker  # noqa: E402


class FakeNvml:
    """libnvidia-ml's entry points the worker calls, with ``procs`` compute processes on the GPU
    named ``uuid`` at ``mhz``; ``calls`` records which were called."""

    def __init__(self, uuid="GPU-1234", procs=3, mhz=1755, v3=True):
        self.uuid, self.procs, self.mhz, self.calls = uuid, procs, mhz, []
        if not v3:
            self.nvmlDeviceGetComputeRunningProcesses_v3 = None

    def nvmlDeviceGetHandleByUUID(self, uuid, handle_ptr):
        self.calls.append("handle")
        if uuid.decode() != self.uuid:
            return 13  # NVML_ERROR_NOT_FOUND
        handle_ptr.contents.value = 0xbeef
        return 0

    def nvmlDeviceGetClockInfo(self, handle, clock, mhz_ptr):
        assert handle.value == 0xbeef and clock.value == 1  # NVML_CLOCK_SM
        mhz_ptr.contents.value = self.mhz
        return 0

    def nvmlDeviceGetComputeRunningProcesses_v3(self, handle, count_ptr, infos):
        # No room for the list (count 0, no array): NVML answers the count and INSUFFICIENT_SIZE.
        assert handle.value == 0xbeef and count_ptr.contents.value == 0 and infos is None
        self.calls.append("procs_v3")
        count_ptr.contents.value = self.procs
        return 7 if self.procs else 0

    def nvmlDeviceGetComputeRunningProcesses_v2(self, handle, count_ptr, infos):
        self.calls.append("procs_v2")
        count_ptr.contents.value = self.procs
        return 7 if self.procs else 0


def no_smi(monkeypatch):
    seen = []
    monkeypatch.setattr(worker, "_smi_lines", lambda args, gpu: seen.append(args) or [])
    return seen


def test_nvml_answers_both_readings_without_nvidia_smi(monkeypatch):
    seen = no_smi(monkeypatch)
    nvml = worker.Nvml(FakeNvml(procs=3, mhz=1980))
    assert worker.sm_clock_mhz("GPU-1234", nvml) == "1980"
    assert worker.other_gpu_processes("GPU-1234", nvml) == 2  # this worker is one of the three
    assert seen == []
    assert nvml.lib.calls.count("handle") == 1  # the handle is looked up once


def test_a_gpu_with_no_process_and_an_older_driver_entry_point(monkeypatch):
    no_smi(monkeypatch)
    nvml = worker.Nvml(FakeNvml(procs=0, v3=False))
    assert worker.other_gpu_processes("GPU-1234", nvml) == 0
    assert nvml.lib.calls == ["handle", "procs_v2"]


def test_nvidia_smi_answers_when_nvml_cannot(monkeypatch):
    lines = {"--query-compute-apps=pid": ["101", "102", "103", "104"], "--query-gpu=clocks.sm": ["1410"]}
    monkeypatch.setattr(worker, "_smi_lines", lambda args, gpu: lines.get(args[0], []))
    unknown = worker.Nvml(FakeNvml(uuid="GPU-other"))
    assert worker.other_gpu_processes("GPU-1234", unknown) == 3
    assert worker.sm_clock_mhz("GPU-1234", unknown) == "1410"
    missing = worker.Nvml()
    missing.failed = True  # as when libnvidia-ml.so.1 is not there
    assert worker.other_gpu_processes("GPU-1234", missing) == 3
    assert worker.sm_clock_mhz("GPU-1234", missing) == "1410"
