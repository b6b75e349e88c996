"""The accelerator a benchmark ran on and its peak dense bf16 throughput, for MFU.

MFU here is 2 × parameters × tokens / time over the chip's published dense bf16 peak (no sparsity):
989.4 TFLOP/s for the H100 SXM and the H200, which share the compute die (NVIDIA's data sheets). A
plain bf16 matrix product reaches about 790–800 TFLOP/s on both in this workplace, so ~80 % MFU is
the practical ceiling.
"""

from __future__ import annotations

DENSE_BF16_PEAK = {"H100": 989.4e12, "H200": 989.4e12, "A100": 312e12, "L40S": 362.05e12}


def torch_dtype(name: str, device: str):  # noqa: ANN201 (a torch.dtype; torch is imported lazily)
    """The dtype a benchmark runs in: `name` (bfloat16, float32), or for auto bf16 on CUDA, fp32 elsewhere."""
    import torch

    if name != "auto":
        return getattr(torch, name)
    return torch.bfloat16 if device == "cuda" else torch.float32


def accelerator(device: str) -> tuple[str, float | None]:
    """(the device's name, its dense bf16 peak in FLOP/s or None where unknown)."""
    if device != "cuda":
        return "cpu", None
    import torch

    name = torch.cuda.get_device_name()
    peak = next((value for key, value in DENSE_BF16_PEAK.items() if key in name), None)
    return name, peak


def mfu_line(label: str, params: int, tokens: float, seconds: float, device: str) -> str:
    name, peak = accelerator(device)
    achieved = 2 * params * tokens / seconds
    share = f"{achieved / peak:.1%} of {peak / 1e12:.0f} TFLOP/s" if peak else "no published peak known"
    return f"MFU {label}: {achieved / 1e12:.1f} TFLOP/s on {name}, {share} (2 × params × tokens / time)"


def interleaved(sides: dict, repeats: int, device: str) -> tuple[dict, dict, dict, dict]:  # noqa: ANN001
    """Each side of a ratio run `repeats` times, alternating (A B A B …), synchronised on CUDA:
    ({side: its last result}, {side: wall seconds per run}, {side: CPU seconds per run}, {side: peak
    GiB: the GPU's allocations on CUDA, the process's resident set elsewhere})."""
    import resource
    import time

    import torch

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    results, peaks = {}, dict.fromkeys(sides, 0.0)
    walls: dict = {name: [] for name in sides}
    cpus: dict = {name: [] for name in sides}
    for _ in range(repeats):
        for name, run in sides.items():
            sync()
            if device == "cuda":
                torch.cuda.reset_peak_memory_stats()
            wall, cpu = time.perf_counter(), time.process_time()
            results[name] = run()
            sync()
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
            peak = (
                torch.cuda.max_memory_allocated() / 2**30
                if device == "cuda"
                else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
            )
            peaks[name] = max(peaks[name], peak)
    return results, walls, cpus, peaks


def median_rate(amounts: list[float], seconds: list[float]) -> float:
    """The median over runs of each run's own amount per second (runs of other sizes, with --fresh)."""
    import statistics

    return statistics.median(amount / wall for amount, wall in zip(amounts, seconds, strict=True))


def spread(values: list[float]) -> str:
    """min / median / max."""
    import statistics

    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"
