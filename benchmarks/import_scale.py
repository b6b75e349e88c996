"""Imports of 10,000 / 100,000 / 1,000,000 judgments: rows per second and peak memory of the command.

A generic judgments CSV in the shape of a real study (20 models, every pair, 10 judges, a prompt's
text on its first row only) is made for each size — with `--scores`, a score file (JSONL) of 20 models'
answers each scored by 10 judges, through `import_scores` — and `manage.py import_judgments` imports it
into a fresh database — the embedded SQLite and, with `--postgres`, a fresh PostgreSQL database —
in a child process, so its peak resident memory is the child's own (wait4). The fixed baseline is
pandas reading the same file in a child too, interpreter start included (what the issue compared
with); the two sides run interleaved
(import, read, import, read …) in one run, CPU time beside wall time, min / median / max over
`--repeats`.

Bound (issue: scale): the 1,000,000-row import under 1 GiB of peak memory on each database (and at
10,000,000: `--sizes 10000000`); with `--again` the same file imported once more into the same
database, unchanged, within the first import's CPU and the same memory bound; the script exits
non-zero when one is missed. The issue's 40,000 rows per second is printed, met or not.
On PostgreSQL the server's own time to store the same rows (copied aside, then one INSERT … SELECT
with every index and foreign key checked, and its commit) is printed beside the import, with the
keys checked by PostgreSQL's triggers and as the import checks them: no client can import faster.

    python benchmarks/import_scale.py                                   # SQLite, 10k / 100k / 1M
    python benchmarks/import_scale.py --postgres postgres://postgres@127.0.0.1:5432/postgres
    python benchmarks/import_scale.py --scores ...                      # a score file, import_scores
    python benchmarks/import_scale.py --benchmark-file ...              # a benchmark file, import_benchmark
    python benchmarks/import_scale.py --arena ...                       # judgments shaped as Arena's votes
    python benchmarks/import_scale.py --study ...                       # a study zip beside the same judgments as CSV
    python benchmarks/import_scale.py --against ../earlier-checkout ...   # earlier code, interleaved
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MEMORY_BOUND = 1024**3
ROWS_PER_SECOND_TARGET = 40_000
DATABASE = "evalhub_import_scale"  # made fresh for each PostgreSQL import, dropped at the end


def write_csv(path: Path, rows: int, seed: int = 0) -> None:
    models = [f"model-{n}" for n in range(20)]
    judges = [f"judge-{n}" for n in range(10)]
    pairs = list(itertools.combinations(models, 2))
    per_prompt = len(pairs) * len(judges)
    rng = random.Random(seed)
    with path.open("w") as out:
        out.write("prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,probability_a\n")
        for row in range(rows):
            prompt, rest = divmod(row, per_prompt)
            (a, b), judge = pairs[rest // len(judges)], judges[rest % len(judges)]
            text = f"Question {prompt}: which answer is better?" if rest == 0 else ""
            winner = rng.choice("ab")
            out.write(f"p{prompt},{text},{a},{b},answer {prompt} by {a},answer {prompt} by {b},{judge},{winner},\n")


def write_arena(path: Path, rows: int, seed: int = 0) -> None:
    """Votes in the shape of Chatbot Arena's published battles: each a conversation of its own (a new
    prompt and two new responses a row), two of 20 models, 5,000 people voting."""
    models = [f"model-{n}" for n in range(20)]
    rng = random.Random(seed)
    with path.open("w") as out:
        out.write("prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,probability_a\n")
        for row in range(rows):
            a, b = rng.sample(models, 2)
            winner = rng.choice(("a", "b", "tie"))
            out.write(
                f"c{row},Conversation {row}: what should I cook tonight?,{a},{b},"
                f"{a}'s answer to conversation {row},{b}'s answer to conversation {row},human-{row % 5000},{winner},\n"
            )


STUDY_COLUMNS_JUDGES, STUDY_JOINED_JUDGES = 8, 2  # annotators as columns of the items file; judges in files


def write_study(path: Path, rows: int, seed: int = 0) -> None:
    """A study zip in its published shape (`study.json`, an items file with eight annotators as columns
    and two judges' verdicts and reasons in files joined on the item id), `rows` judgments in all, and the
    same judgments as one generic CSV beside it (`path` with .csv): what the study costs over the layout."""
    import zipfile

    models = [f"model-{n}" for n in range(20)]
    pairs = list(itertools.combinations(models, 2))
    judges = STUDY_COLUMNS_JUDGES + STUDY_JOINED_JUDGES
    rng = random.Random(seed)
    columns = [f"annotator_{n}" for n in range(STUDY_COLUMNS_JUDGES)]
    items = ["id,question,model_a,model_b,answer_a,answer_b," + ",".join(columns) + "\n"]
    joined: list[list[str]] = [[] for _ in range(STUDY_JOINED_JUDGES)]
    generic = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,rationale\n"]
    for item in range(rows // judges):
        prompt, (a, b) = item // len(pairs), pairs[item % len(pairs)]
        question, answers = f"Question {prompt}?", (f"answer {prompt} by {a}", f"answer {prompt} by {b}")
        said = [rng.choice("12") for _ in range(judges)]
        items.append(f"i{item},{question},{a},{b},{answers[0]},{answers[1]}," + ",".join(said[:8]) + "\n")
        for n in range(STUDY_JOINED_JUDGES):
            joined[n].append(json.dumps({"id": f"i{item}", "verdict": said[8 + n], "reason": f"why {item}"}) + "\n")
        for n, verdict in enumerate(said):
            judge = columns[n] if n < STUDY_COLUMNS_JUDGES else f"judge-{n - STUDY_COLUMNS_JUDGES}"
            reason = f"why {item}" if n >= STUDY_COLUMNS_JUDGES else ""
            winner = "a" if verdict == "1" else "b"
            generic.append(f"i{item},{question},{a},{b},{answers[0]},{answers[1]},{judge},{winner},{reason}\n")
    mapping = {
        "items": "items.csv",
        "item_id": "id",
        "columns": {"prompt_id": "id", "prompt": "question", "response_a": "answer_a", "response_b": "answer_b"},
        "verdicts": {"1": "a", "2": "b"},
        "judges": [
            *({"judge": column, "kind": "human", "winner": column} for column in columns),
            *(
                {
                    "judge": f"judge-{n}",
                    "kind": "model",
                    "file": f"judge-{n}.jsonl",
                    "winner": "verdict",
                    "rationale": "reason",
                }
                for n in range(STUDY_JOINED_JUDGES)
            ),
        ],
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("study.json", json.dumps(mapping))
        archive.writestr("items.csv", "".join(items))
        for n, lines in enumerate(joined):
            archive.writestr(f"judge-{n}.jsonl", "".join(lines))
    path.with_suffix(".csv").write_text("".join(generic))


def write_scores(path: Path, rows: int, seed: int = 0) -> None:
    """A score file in JSONL (CSV score files were refused before a39b2b8): 20 models' answers to each
    prompt, each scored by 10 judges under one criterion, a prompt's text on its first row only."""
    models = [f"model-{n}" for n in range(20)]
    raters = [f"judge-{n}" for n in range(10)]
    rng = random.Random(seed)
    with path.open("w") as out:
        for row in range(rows):
            prompt, rest = divmod(row, len(models) * len(raters))
            model, rater = models[rest // len(raters)], raters[rest % len(raters)]
            record = {"prompt_id": f"p{prompt}", "model": model, "response": f"answer {prompt} by {model}"}
            if rest == 0:
                record["prompt"] = f"Question {prompt}: how good is the answer?"
            record |= {"rater": rater, "criterion": "coherence", "score": rng.randint(1, 5), "scale": "1-5"}
            out.write(json.dumps(record) + "\n")


def write_benchmark(path: Path, rows: int, seed: int = 0) -> None:
    """A benchmark file in JSONL, one prompt and one response a row (the shape of a large QA set with one
    model's answers): each prompt with its category and reference answer."""
    rng = random.Random(seed)
    with path.open("w") as out:
        for row in range(rows):
            record = {
                "prompt_id": f"q{row}",
                "prompt": f"Question {row}: what is {row} times {rng.randint(2, 99)}?",
                "category": f"arithmetic-{row % 7}",
                "reference_answer": f"The product, worked out step by step for question {row}.",
                "model": "model-0",
                "response": f"Answer {row}: the product is {row * 3}, since {row} times three is that.",
            }
            out.write(json.dumps(record) + "\n")


def run_child(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, int, str]:
    """(wall s, CPU s, peak RSS bytes, output) of one child process, run in `cwd` (a checkout)."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{output[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, output


def drop_database(postgres: str) -> None:
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")


def fresh_database(kind: str, postgres: str, workdir: Path, template: Path | None) -> dict[str, str]:
    env = {**os.environ, "EVALHUB_MAX_IMPORT_BYTES": str(16 * 1024**3), "EVALHUB_DATA_DIR": str(workdir / "data")}
    if kind == "sqlite":
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        (workdir / "data").mkdir(exist_ok=True)
        database = workdir / "data" / "evalhub.sqlite3"
        for stale in (database, database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")):
            stale.unlink(missing_ok=True)  # fresh: an earlier import's rows would make this one a re-import
        if template is not None:
            shutil.copy(template, database)
        return env
    import psycopg

    name = DATABASE
    with psycopg.connect(postgres, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    env.update(DATABASE_URL=postgres.rsplit("/", 1)[0] + f"/{name}", SECRET_KEY="import-scale-benchmark")
    env.pop("REDIS_URL", None)
    return env


READ = "import sys, pandas; pandas.read_csv(sys.argv[1], dtype=str, keep_default_na=False)"
READ_JSONL = "import sys, pandas; pandas.read_json(sys.argv[1], lines=True, dtype=str)"


def pandas_read(path: Path) -> tuple[float, float]:
    """Pandas reading the file, in a child as the import is (this process stays small: a child's peak
    memory counts what its parent held when it was started)."""
    reader = READ_JSONL if path.suffix == ".jsonl" else READ
    wall, cpu, _, _ = run_child([sys.executable, "-c", reader, str(path)], dict(os.environ))
    return wall, cpu


def server_alone(url: str) -> tuple[float, float]:
    """Seconds PostgreSQL itself takes to store the judgments just imported again (copied aside, the
    table emptied, then one INSERT … SELECT and its commit, every index checked): the most an import
    from a client could reach on this machine and database. Twice: with the foreign keys checked by
    PostgreSQL's triggers, one lookup per key per row at commit, and as the import checks them (the
    rows referenced locked a set at a time, the triggers off for the transaction)."""
    import psycopg

    with psycopg.connect(url) as db:
        names = [
            row[0]
            for row in db.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'catalog_judgment' AND column_name <> 'id' ORDER BY ordinal_position"
            )
        ]
        columns = ", ".join(f'"{name}"' for name in names)
        # The table's foreign keys as PostgreSQL holds them: (column, table referenced), single-column keys.
        foreign_keys = db.execute(
            "SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c "
            "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
            "WHERE c.conrelid = 'catalog_judgment'::regclass AND c.contype = 'f'"
        ).fetchall()
        db.execute(f"CREATE TABLE judgments_aside AS SELECT {columns} FROM catalog_judgment")
        seconds = []
        for by_triggers in (True, False):
            db.execute("TRUNCATE catalog_judgment CASCADE")
            db.commit()
            started = time.perf_counter()
            if not by_triggers:
                for key, target in foreign_keys:
                    db.execute(
                        f"SELECT id FROM {target} WHERE id IN (SELECT DISTINCT {key} FROM judgments_aside) "
                        "FOR KEY SHARE"
                    ).fetchall()
                db.execute("SET LOCAL session_replication_role = replica")
            db.execute(f"INSERT INTO catalog_judgment ({columns}) SELECT {columns} FROM judgments_aside")
            db.commit()
            seconds.append(time.perf_counter() - started)
        return seconds[0], seconds[1]


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--postgres", default="", help="an admin URL; a database evalhub_import_scale is made")
    parser.add_argument("--scores", action="store_true", help="a score file (JSONL) through import_scores instead")
    parser.add_argument(
        "--benchmark-file", action="store_true", help="a benchmark file (JSONL) through import_benchmark instead"
    )
    parser.add_argument(
        "--arena", action="store_true", help="judgments shaped as Arena's votes: a new prompt and responses a row"
    )
    parser.add_argument(
        "--study",
        action="store_true",
        help="a study zip (annotators as columns, judges in joined files), interleaved with the same judgments "
        "as a generic CSV",
    )
    parser.add_argument(
        "--again", action="store_true", help="import the same file once more into the same database (unchanged)"
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="a checkout of earlier code (same migrations): its import of the same file alternates with this one's",
    )
    args = parser.parse_args()
    kinds = ["sqlite", *(["postgresql"] if args.postgres else [])]
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        migrated = None
        for kind in kinds:
            for rows in (int(size) for size in args.sizes.split(",")):
                kind_of_import, write, path = (
                    ("import_scores", write_scores, workdir / f"scores-{rows}.jsonl")
                    if args.scores
                    else ("import_benchmark", write_benchmark, workdir / f"benchmark-{rows}.jsonl")
                    if args.benchmark_file
                    else ("import_judgments", write_arena, workdir / f"arena-{rows}.csv")
                    if args.arena
                    else ("import_judgments", write_study, workdir / f"study-{rows}.zip")
                    if args.study
                    else ("import_judgments", write_csv, workdir / f"judgments-{rows}.csv")
                )
                if not path.exists():
                    write(path, rows)
                walls, cpus, peaks, read_walls, read_cpus, alone, alone_by_sets = [], [], [], [], [], [], []
                again: list[tuple[float, float, int]] = []
                earlier: list[tuple[float, float, int]] = []
                earlier_again: list[tuple[float, float, int]] = []
                as_generic: list[tuple[float, float, int]] = []
                for _ in range(args.repeats):
                    env = fresh_database(kind, args.postgres, workdir, migrated)
                    if kind == "postgresql" or migrated is None:
                        run_child([sys.executable, "manage.py", "migrate", "-v0"], env)
                        if kind == "sqlite":
                            migrated = workdir / "migrated.sqlite3"
                            shutil.copy(workdir / "data" / "evalhub.sqlite3", migrated)
                    command = [sys.executable, "manage.py", kind_of_import, str(path), "--create-models"]
                    wall, cpu, peak, _ = run_child([*command, "--benchmark", "scale"], env)
                    walls.append(wall)
                    cpus.append(cpu)
                    peaks.append(peak)
                    if args.again:  # the same file into the same database: every row already stored, unchanged
                        again.append(run_child([*command, "--benchmark", "scale"], env)[:3])
                    if kind == "postgresql" and kind_of_import == "import_judgments":  # the judgment table's rows
                        by_triggers, by_sets = server_alone(env["DATABASE_URL"])
                        alone.append(by_triggers)
                        alone_by_sets.append(by_sets)
                    if args.study:  # the same judgments as a generic CSV, between the study's imports
                        env = fresh_database(kind, args.postgres, workdir, migrated)
                        if kind == "postgresql":
                            run_child([sys.executable, "manage.py", "migrate", "-v0"], env)
                        generic_command = [sys.executable, "manage.py", kind_of_import, str(path.with_suffix(".csv"))]
                        as_generic.append(
                            run_child([*generic_command, "--create-models", "--benchmark", "scale"], env)[:3]
                        )
                    read_wall, read_cpu = pandas_read(path.with_suffix(".csv") if args.study else path)
                    read_walls.append(read_wall)
                    read_cpus.append(read_cpu)
                    if args.against:  # the earlier code's import, between this one's: load falls on both
                        env = fresh_database(kind, args.postgres, workdir, None)
                        run_child([sys.executable, "manage.py", "migrate", "-v0"], env, args.against)
                        earlier.append(run_child([*command, "--benchmark", "scale"], env, args.against)[:3])
                        if args.again:
                            earlier_again.append(run_child([*command, "--benchmark", "scale"], env, args.against)[:3])
                rate = rows / statistics.median(walls)
                print(
                    f"{kind:10} {rows:>9,} rows ({path.stat().st_size / 2**20:.0f} MiB): "
                    f"import wall {spread(walls)} s, "
                    f"CPU {spread(cpus)} s, {rate:,.0f} rows/s, peak {max(peaks) / 2**20:,.0f} MiB; "
                    f"pandas read wall {spread(read_walls)} s, CPU {spread(read_cpus)} s "
                    f"(import / read CPU {statistics.median(cpus) / statistics.median(read_cpus):.1f}×)"
                )
                if again:
                    print(
                        f"  the same file again (unchanged): wall {spread([a[0] for a in again])} s, "
                        f"CPU {spread([a[1] for a in again])} s, peak {max(a[2] for a in again) / 2**20:,.0f} MiB "
                        f"(CPU {statistics.median(a[1] for a in again) / statistics.median(cpus):.2f}× the first)"
                    )
                    if rows >= 1_000_000 and statistics.median(a[1] for a in again) > statistics.median(cpus):
                        missed.append(f"{kind} {rows:,} rows: the same file again cost more CPU than the first")
                    peaks.extend(a[2] for a in again)
                if as_generic:
                    generic_cpus = [r[1] for r in as_generic]
                    print(
                        f"  the same judgments as a generic CSV: wall {spread([r[0] for r in as_generic])} s, "
                        f"CPU {spread(generic_cpus)} s, peak {max(r[2] for r in as_generic) / 2**20:,.0f} MiB "
                        f"(study / CSV CPU {statistics.median(cpus) / statistics.median(generic_cpus):.2f}×)"
                    )
                for label, runs in (("earlier code", earlier), ("earlier code, the same file again", earlier_again)):
                    if runs:
                        print(
                            f"  {label} ({args.against}): wall {spread([r[0] for r in runs])} s, "
                            f"CPU {spread([r[1] for r in runs])} s, peak {max(r[2] for r in runs) / 2**20:,.0f} MiB"
                        )
                if alone:
                    print(
                        f"  PostgreSQL storing the same rows itself (no client), the keys checked by its "
                        f"triggers: {spread(alone)} s, {rows / statistics.median(alone):,.0f} rows/s; "
                        f"checked a set at a time, as the import does: {spread(alone_by_sets)} s, "
                        f"{rows / statistics.median(alone_by_sets):,.0f} rows/s — the most an import can reach here"
                    )
                if rows >= 1_000_000:
                    if max(peaks) >= MEMORY_BOUND:
                        missed.append(f"{kind} {rows:,} rows: peak {max(peaks) / 2**30:.2f} GiB ≥ 1 GiB")
                    met = "met" if rate >= ROWS_PER_SECOND_TARGET else "not met"
                    print(f"  target {ROWS_PER_SECOND_TARGET:,} rows/s (printed only): {met}")
    if args.postgres:
        drop_database(args.postgres)
    for line in missed:
        print(f"BOUND MISSED: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    from measured import reported

    with reported():
        code = main()
    sys.exit(code)
