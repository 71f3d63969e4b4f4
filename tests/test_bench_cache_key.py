"""The benchmarks' fixture cache key (issue 21): it changes with the generator's code, so a
fixture cached by an older generator is never read, and not with its comments or docstrings."""

from __future__ import annotations

from pathlib import Path

from conftest import load_benchmark

import evalkit.fixtures.generate as generate_module


def test_cache_key_follows_the_generator_code_only(tmp_path: Path) -> None:
    bench = load_benchmark("bench_index.py")
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
