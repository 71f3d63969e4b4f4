"""The benchmarks' fixture cache key (issue 21): it changes with the generator's code, so a
fixture cached by an older generator is never read, and not with its comments or docstrings."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import evalkit.fixtures.generate as generate_module

BENCH_INDEX = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_index.py"


def _bench_index() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_index_under_test", BENCH_INDEX)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cache_key_follows_the_generator_code_only(tmp_path: Path) -> None:
    bench = _bench_index()
    source = Path(generate_module.__file__).read_text(encoding="utf-8")
    original = tmp_path / "original.py"
    original.write_text(source, encoding="utf-8")
    key = bench.generator_key(original)
    assert key == bench.generator_key()  # the installed module is this source
    assert len(key) == 12

    reworded = tmp_path / "reworded.py"
    reworded.write_text(
        source.replace('"""Random but valid fixtures', '"""Random, valid fixtures', 1)
        + "\n# a comment\n",
        encoding="utf-8",
    )
    assert reworded.read_text(encoding="utf-8") != source
    assert bench.generator_key(reworded) == key

    changed = tmp_path / "changed.py"
    assert "ZH_OFFSET: Final = 2.7" in source
    changed.write_text(
        source.replace("ZH_OFFSET: Final = 2.7", "ZH_OFFSET: Final = 2.8"), encoding="utf-8"
    )
    assert bench.generator_key(changed) != key
