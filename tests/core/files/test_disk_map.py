"""The on-disk map an import keeps a file's prompts in: what it holds is what a dict would."""

from __future__ import annotations

import random
from typing import NamedTuple

from evalhub.core.files.benchmarks import PromptRecord
from evalhub.core.files.disk_map import DiskMap


class Placed(NamedTuple):
    id: int
    category: str
    created: bool = False


def test_it_holds_what_a_dict_would_in_the_order_keys_were_first_put():
    rng = random.Random(7)
    keys = [f"p{n}" for n in range(3000)] + ["", "it's", 'say "hi"', "back\\slash", "ünï \u2028 😀"]
    rng.shuffle(keys)
    expected: dict[str, Placed] = {}
    with DiskMap(Placed) as map_:
        for start in range(0, len(keys), 700):  # batches that put some keys again with new values
            batch = [(key, Placed(n, f"c{n % 3}")) for n, key in enumerate(keys[start : start + 700], start)]
            again = [(key, Placed(-n, "again", True)) for n, key in enumerate(keys[: start // 2])]
            map_.put_many(batch + again)
            expected.update(batch + again)
            assert len(map_) == len(expected)
        assert list(map_.items()) == list(expected.items()), "values as last put, keys in first-put order"
        asked = rng.sample(keys, 500) + ["never-put"]
        assert map_.get_many(asked) == {key: expected[key] for key in asked if key in expected}
        assert (map_.get(keys[0]), map_.get("never-put")) == (expected[keys[0]], None)


def test_one_lookup_asks_for_more_keys_than_sqlite_takes_as_parameters():
    with DiskMap(Placed) as map_:
        map_.put_many((f"k{n}", Placed(n, "")) for n in range(40_000))
        found = map_.get_many({f"k{n}" for n in range(0, 80_000, 2)})
        assert len(found) == 20_000 and found["k39998"].id == 39_998


def test_a_prompt_record_comes_back_equal_sets_and_all():
    record = PromptRecord(
        external_id="q1",
        line=3,
        text="Is 221 prime?",
        privileged={"hint": "13"},
        metadata={"id": 10**40, "scores": [1.5, None], "nested": {"a": True}},
        given=frozenset({"text", "category"}),
        cleared=("privileged.old",),
    )
    with DiskMap(PromptRecord) as map_:
        map_.put_many([("q1", record)])
        assert map_.get_many(["q1"]) == {"q1": record}
