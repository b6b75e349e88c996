"""`python -m evalhub.client`: a pipeline's command line. Exit status: 0 succeeded, 1 the job failed or
was cancelled, 3 it finished with failures (partial), 4 it was paused, 2 the API refused the call.

    python -m evalhub.client start judge_run '{"reference": 12, "judge": "openai:gpt-4o-mini"}' --follow
    python -m evalhub.client follow 345
    python -m evalhub.client upload judgments verdicts.jsonl --field benchmark=my-benchmark
    python -m evalhub.client judge-lab --query benchmark=my-benchmark --current
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evalhub.client import ApiError, Evalhub, JobFailed


def _pairs(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals:
            raise SystemExit(f"{item!r}: write NAME=VALUE")
        out[name] = value
    return out


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m evalhub.client", description="evalhub's API from a pipeline.")
    main.add_argument("--url", help="evalhub's address (default: EVALHUB_URL)")
    main.add_argument("--token", help="a personal API token (default: EVALHUB_TOKEN; prefer the variable)")
    main.add_argument("--quiet", action="store_true", help="no progress bar")
    commands = main.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start a run; print its job (or follow it)")
    start.add_argument("kind")
    start.add_argument("config", help="the run's configuration as JSON (or @FILE)")
    start.add_argument("--follow", action="store_true", help="follow the job to its end")
    follow = commands.add_parser("follow", help="follow a job started anywhere to its end")
    follow.add_argument("job", type=int)
    upload = commands.add_parser("upload", help="import a file")
    upload.add_argument("what", choices=["benchmark", "judgments", "scores"])
    upload.add_argument("path")
    upload.add_argument("--field", action="append", default=[], metavar="NAME=VALUE")
    upload.add_argument(
        "--background", action="store_true", help="import by a worker (as every large file is) and follow it"
    )
    for name in ("judge-lab", "win-rates"):
        figures = commands.add_parser(name, help=f"print the {name.replace('-', ' ')} as JSON")
        figures.add_argument("--query", action="append", default=[], metavar="NAME=VALUE")
        figures.add_argument("--current", action="store_true", help="wait until it is of the data as it is now")
    return main


def run(arguments: list[str] | None = None, client: Evalhub | None = None) -> int:
    options = parser().parse_args(arguments)
    evalhub = client or Evalhub(options.url, options.token)
    progress = False if options.quiet else None
    try:
        answer: Any
        if options.command == "start":
            text = options.config
            if text.startswith("@"):
                with open(text[1:], encoding="utf-8") as file:
                    text = file.read()
            answer = evalhub.start(options.kind, **json.loads(text))
            if options.follow:
                answer = evalhub.follow(answer["id"], progress=progress)
        elif options.command == "follow":
            answer = evalhub.follow(options.job, progress=progress)
        elif options.command == "upload":
            fields: dict[str, Any] = dict(_pairs(options.field))
            answer = evalhub.upload(
                options.what, options.path, background=options.background, progress=progress, **fields
            )
        elif options.command == "judge-lab":
            answer = evalhub.judge_lab(_pairs(options.query), current=options.current)
        else:
            answer = evalhub.win_rates(_pairs(options.query), current=options.current)
    except JobFailed as failed:
        print(json.dumps(failed.job, indent=2))
        print(str(failed), file=sys.stderr)
        return {"partial": 3, "paused": 4}.get(failed.job["status"], 1)
    except ApiError as refused:
        print(f"evalhub refused: {refused}", file=sys.stderr)
        for error in refused.errors:
            print(f"  {error.get('place') or error.get('line') or ''} {error['message']}".rstrip(), file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(run())
