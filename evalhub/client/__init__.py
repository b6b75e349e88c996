"""A small Python client of evalhub's HTTP API (/api/v1/, docs/api.md): what a pipeline calls to upload
outputs, start a run, follow its job and fetch the figures. It needs httpx only (no Django, nothing
else of evalhub), so it can be copied next to a pipeline; `python -m evalhub.client` is its command line.

    from evalhub.client import Evalhub

    evalhub = Evalhub("https://evalhub.example.org", token="evh_…")   # or EVALHUB_URL / EVALHUB_TOKEN
    job = evalhub.start("judge_run", reference=12, judge="openai:gpt-4o-mini")
    done = evalhub.follow(job["id"])           # a progress bar on a terminal; raises JobFailed
    report = evalhub.judge_lab(benchmark="my-benchmark", current=True)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import httpx

FINISHED = ("succeeded", "partial", "failed", "cancelled")
PAUSED = "paused"  # not finished, but nothing moves it until someone resumes it: a follower stops there


class ApiError(Exception):
    """An answer other than success: its status, the API's `detail` and, for a refused upload or
    configuration, its `errors` (each with `line`, `place` and `message`)."""

    def __init__(self, status: int, detail: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status, self.detail, self.errors = status, detail, errors or []


class JobFailed(Exception):
    """A followed job that ended other than succeeded (`job` is its last state)."""

    def __init__(self, job: Mapping[str, Any]) -> None:
        why = job.get("error") or job.get("message") or ""
        super().__init__(f"job {job['id']} {job['status_words'].lower()}" + (f": {why}" if why else ""))
        self.job = job


class Evalhub:
    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url = url or os.environ.get("EVALHUB_URL", "")
        token = token or os.environ.get("EVALHUB_TOKEN", "")
        if not url or not token:
            raise ValueError("give evalhub's URL and a token (or set EVALHUB_URL and EVALHUB_TOKEN)")
        self.http = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )

    # --- the calls ----------------------------------------------------------------------------------
    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.http.request(method, path, **kwargs)
        if answer.is_success:
            return answer.json()
        self._refused(answer)

    @staticmethod
    def _refused(answer: httpx.Response) -> NoReturn:
        try:
            body = answer.json()
        except ValueError:
            body = {"detail": answer.text}
        detail = body.get("detail", answer.reason_phrase)
        raise ApiError(answer.status_code, detail if isinstance(detail, str) else str(detail), body.get("errors"))

    def me(self) -> dict[str, Any]:
        return self._call("GET", "/me")

    def jobs(self, *, kind: str = "", status: str = "", limit: int = 100, offset: int = 0) -> dict[str, Any]:
        return self._call("GET", "/jobs", params={"kind": kind, "status": status, "limit": limit, "offset": offset})

    def job(self, job_id: int) -> dict[str, Any]:
        return self._call("GET", f"/jobs/{job_id}")

    def pause(self, job_id: int) -> dict[str, Any]:
        return self._call("POST", f"/jobs/{job_id}/pause")

    def cancel(self, job_id: int) -> dict[str, Any]:
        return self._call("POST", f"/jobs/{job_id}/cancel")

    def resume(self, job_id: int) -> dict[str, Any]:
        return self._call("POST", f"/jobs/{job_id}/resume")

    def start(self, kind: str, **config: Any) -> dict[str, Any]:
        """Start a run of `kind` with its configuration's fields; the job to follow."""
        return self._call("POST", f"/runs/{kind}", json=config)

    def upload(
        self,
        what: str,
        path: str | Path,
        *,
        background: bool = False,
        wait: bool = True,
        poll: float = 2.0,
        progress: bool | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Import a file: `what` is benchmark, judgments or scores (scores take Inspect logs too). A large
        file (or one sent with `background`) is imported by a worker: with `wait` the upload's job is
        followed (`progress`, `poll` as `follow`'s) and what it came to is returned as an import done at
        once is; without, the queued upload (`id`, `job`). A refused file raises ApiError (422) with its
        row errors either way."""
        data = {name: str(value).lower() if isinstance(value, bool) else str(value) for name, value in fields.items()}
        if background:
            data["background"] = "true"
        with open(path, "rb") as file:
            answer = self.http.post(f"/imports/{what}", files={"file": (Path(path).name, file)}, data=data)
        if not answer.is_success:
            self._refused(answer)
        body: dict[str, Any] = answer.json()
        if answer.status_code != 202 or not wait:
            return body
        try:
            self.follow(body["job"]["id"], poll=poll, progress=progress)
        except JobFailed:
            pass  # a refused file fails its job: the upload says why
        return self.uploaded(body["id"])

    def uploaded(self, upload_id: int) -> dict[str, Any]:
        """What an upload imported in the background came to (ApiError 422 with its row errors if it was
        refused; JobFailed if its job ended without importing it, e.g. cancelled or paused)."""
        upload = self._call("GET", f"/imports/uploads/{upload_id}")
        if upload["rejected"]:
            refused = upload["rejected"]
            raise ApiError(422, refused["detail"], refused["errors"])
        if upload["imported"] is None:
            raise JobFailed(upload["job"])
        imported: dict[str, Any] = upload["imported"]
        return imported

    def benchmarks(self) -> list[dict[str, Any]]:
        return self._call("GET", "/benchmarks")

    def win_rates(
        self, query: Mapping[str, Any] | None = None, *, current: bool = False, poll: float = 5.0, **params: Any
    ) -> dict[str, Any]:
        """A judge's win rates against a baseline (`benchmark`, `judge`, `baseline`…); `current`: wait
        until they are of the data as it is now."""
        return self._until_current("/win-rates", {**(query or {}), **params}, current, poll)

    def judge_lab(
        self, query: Mapping[str, Any] | None = None, *, current: bool = False, poll: float = 5.0, **params: Any
    ) -> dict[str, Any]:
        """The judge lab's report (`benchmark`, `criterion`, `people`…); `current`: wait until it is of the
        data as it is now."""
        return self._until_current("/judge-lab", {**(query or {}), **params}, current, poll)

    def leaderboard(
        self, query: Mapping[str, Any] | None = None, *, current: bool = False, poll: float = 5.0, **params: Any
    ) -> dict[str, Any]:
        """The pairwise leaderboard under the page's filters (`benchmark`, `source`, `table`…)."""
        return self._until_current("/leaderboard", {**(query or {}), **params}, current, poll)

    def export(self, benchmark: str, table: str, path: str | Path, *, format: str = "jsonl") -> Path:  # noqa: A002
        """Download a benchmark's export table (`format` jsonl, csv or hf) to `path`."""
        return self._download(f"/benchmarks/{benchmark}/export/{table}", {"format": format}, path)

    def _download(self, url: str, params: Mapping[str, Any], path: str | Path) -> Path:
        with self.http.stream("GET", url, params=dict(params)) as answer:
            if not answer.is_success:
                answer.read()
                self._refused(answer)
            with open(path, "wb") as file:
                for block in answer.iter_bytes():
                    file.write(block)
        return Path(path)

    def judge_run_log(self, run_id: int, path: str | Path) -> Path:
        """Download a judge run's verdicts as an Inspect eval log (`.eval`) to `path`."""
        return self._download(f"/judge-runs/{run_id}/inspect-log", {}, path)

    def pointwise(self, benchmark: str) -> dict[str, Any]:
        return self._call("GET", "/pointwise", params={"benchmark": benchmark})

    def judge_versions(self, name: str) -> dict[str, Any]:
        return self._call("GET", f"/judge-versions/{name}")

    def _until_current(self, path: str, query: Mapping[str, Any], current: bool, poll: float) -> dict[str, Any]:
        while True:
            reply = self.http.request("GET", path, params=dict(query))
            if reply.status_code == 503 and current:  # a worker computes what the call reads: waited out too
                time.sleep(poll)
                continue
            if not reply.is_success:
                self._refused(reply)
            answer: dict[str, Any] = reply.json()
            if answer["current"] or not current:
                return answer
            time.sleep(poll)

    # --- following a job ----------------------------------------------------------------------------
    def follow(
        self,
        job_id: int,
        *,
        poll: float = 2.0,
        progress: bool | None = None,
        on_update: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Poll a job until it finishes, with a progress bar (units done / total, rate, time left) on a
        terminal (`progress`: force it on or off). Returns the succeeded job; raises JobFailed for one that
        ended otherwise, or was paused (it would wait for a resume that may never come)."""
        from tqdm import tqdm  # imported here: a pipeline that only reads figures never needs it

        job = self.job(job_id)
        shown = sys.stderr.isatty() if progress is None else progress
        with tqdm(total=job["progress_total"] or None, desc=job["title"][:40], unit="unit", disable=not shown) as bar:
            while True:
                bar.total = job["progress_total"] or bar.total
                bar.n = job["progress_done"]
                bar.set_postfix_str(job["status_words"], refresh=True)
                if on_update is not None:
                    on_update(job)
                if job["status"] in FINISHED or job["status"] == PAUSED:
                    break
                time.sleep(poll)
                job = self.job(job_id)
        if job["status"] != "succeeded":
            raise JobFailed(job)
        return job
