"""What a worker reports about itself when it answers a worker check."""

from __future__ import annotations

import importlib.metadata
import os
import socket
from datetime import datetime
from typing import TypedDict

from django.utils import timezone


class WorkerReport(TypedDict):
    """What a worker says of itself in a worker check (stored as the check job's result)."""

    hostname: str
    pid: int
    latency_ms: int
    torch_version: str
    cuda_available: bool
    device_name: str


def describe_worker(queue: str, sent_at: str) -> WorkerReport:
    info: WorkerReport = {
        "hostname": socket.gethostname()[:200],
        "pid": os.getpid(),
        "latency_ms": max(0, int((timezone.now() - datetime.fromisoformat(sent_at)).total_seconds() * 1000)),
        "torch_version": "",
        "cuda_available": False,
        "device_name": "",
    }
    try:
        info["torch_version"] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return info
    if queue == "gpu":  # importing torch costs seconds; only the GPU queue needs its answer
        import torch

        info["cuda_available"] = torch.cuda.is_available()
        if info["cuda_available"]:
            info["device_name"] = torch.cuda.get_device_name(0)[:200]
    return info
