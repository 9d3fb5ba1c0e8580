"""A configuration and a vocabulary that loaded before are read back from the cache:
the same settings, the same messages with their lines, and no PyYAML at start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.config import ConfigError, load_text, nodes
from daemon.files import yamlcache
from daemon.speech import vocabulary
from daemon.speech.vocabulary import load_vocabulary

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CACHE_DIRECTORY", raising=False)
    monkeypatch.setattr(vocabulary, "_LOADED", {})  # read afresh, from file or cache
    return tmp_path / "cache" / "dgt-bridge" / "parsed"


CONFIG = """\
board:
  orientation: flipped
clock:
  time_control: "40/5400:1800+30"
speech:
  vocabulary: en
broadcast:
  port: 8123
  boards:
    - id: hall-1
"""


def _no_parser(*args: object) -> None:
    raise AssertionError("parsed again: the cache was not read")


def test_a_second_load_is_read_back_and_binds_the_same(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_text(CONFIG, "a.yaml")
    assert sorted(p.name.split("-")[0] for p in cache.iterdir()) == ["config", "vocabulary"]
    monkeypatch.setattr(nodes, "yaml_module", _no_parser)  # the second load must not parse
    monkeypatch.setattr(vocabulary, "_parse_yaml", _no_parser)
    vocabulary._LOADED.clear()
    second = load_text(CONFIG, "a.yaml")
    assert second == first
    assert second.board.orientation == "flipped"
    assert second.clock.parsed_time_control == first.clock.parsed_time_control
    assert second.broadcast.boards[0].id == "hall-1"


def test_a_mistake_on_a_cached_tree_names_its_line_as_the_parser_does(
    cache: Path, tmp_path: Path
) -> None:
    certificate = tmp_path / "cert.pem"
    certificate.write_text("x")
    text = f"broadcast:\n  port: 8443\n  tls_certificate: {certificate}\n  tls_key: {certificate}\n"
    load_text(text, "tls.yaml")  # loads, so it is kept
    certificate.unlink()  # the same text now fails: on the cached tree
    with pytest.raises(ConfigError) as cached:
        load_text(text, "tls.yaml")
    for kept in cache.iterdir():
        kept.unlink()
    with pytest.raises(ConfigError) as parsed:
        load_text(text, "tls.yaml")
    assert str(cached.value) == str(parsed.value)
    assert cached.value.line == 3 and "cannot read" in str(cached.value)


def test_environment_overrides_apply_to_a_cached_tree(cache: Path) -> None:
    load_text(CONFIG, "a.yaml")
    settings = load_text(CONFIG, "a.yaml", {"DGT_BRIDGE_BROADCAST__PORT": "9000"})
    assert settings.broadcast.port == 9000
    with pytest.raises(ConfigError, match="environment DGT_BRIDGE_BROADCAST__PORT"):
        load_text(CONFIG, "a.yaml", {"DGT_BRIDGE_BROADCAST__PORT": "many"})


def test_an_edited_file_is_parsed_again(cache: Path) -> None:
    load_text(CONFIG, "a.yaml")
    edited = CONFIG.replace("port: 8123", "port: 8124")
    assert load_text(edited, "a.yaml").broadcast.port == 8124
    with pytest.raises(ConfigError) as error:
        load_text(CONFIG.replace("port: 8123", "port: eighty"), "a.yaml")
    assert error.value.line == 8


def test_a_damaged_cache_file_counts_as_absent(cache: Path) -> None:
    load_text(CONFIG, "a.yaml")
    for kept in cache.iterdir():
        kept.write_text('{"format": 1, "data": ["m", "tag", 0, [["nonsense"]]]}')
    assert load_text(CONFIG, "a.yaml").broadcast.port == 8123
    for kept in cache.iterdir():
        kept.write_text("not json")
    assert load_text(CONFIG, "a.yaml").broadcast.port == 8123


def test_an_unwritable_cache_directory_only_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: no directory below it
    assert load_text(CONFIG, "a.yaml").broadcast.port == 8123
    assert load_text(CONFIG, "a.yaml").broadcast.port == 8123


def test_what_json_cannot_hold_is_not_kept(cache: Path) -> None:
    import datetime

    yamlcache.write("config", "1: a", {1: "a number as a key"})
    assert yamlcache.read("config", "1: a") is None
    yamlcache.write("config", "when: 2026-12-01", {"when": datetime.date(2026, 12, 1)})
    assert yamlcache.read("config", "when: 2026-12-01") is None
    yamlcache.write("vocabulary", "x", {"fine": [1, 2.5, None, True]})
    assert yamlcache.read("vocabulary", "x") == {"fine": [1, 2.5, None, True]}


def test_a_vocabulary_read_back_is_the_same(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_vocabulary("es")
    vocabulary._LOADED.clear()
    monkeypatch.setattr(vocabulary, "_parse_yaml", _no_parser)
    second = load_vocabulary("es")
    assert second == first and second is not first
    assert any(p.name.startswith("vocabulary-") for p in cache.iterdir())


def test_a_file_kept_by_other_code_is_not_served(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade or an edited parser must not be handed a tree the old code made."""
    load_text(CONFIG, "a.yaml")
    assert yamlcache.read("config", CONFIG) is not None
    monkeypatch.setattr(yamlcache, "_stamp", "0ther0de")  # as after an upgrade
    assert yamlcache.read("config", CONFIG) is None
    assert load_text(CONFIG, "a.yaml").board.orientation == "flipped"  # parsed afresh


def test_every_module_that_shapes_the_trees_is_in_the_stamp() -> None:
    """The stamp reads each shaping module's size and time: one it cannot find
    (a path left behind when the modules moved) would keep the stamp the same
    however the parser changed, and serve trees the old code made."""
    paths = yamlcache.shaping_modules()
    assert len(paths) == len(yamlcache._SHAPING)
    assert all(Path(path).is_file() for path in paths), paths


def test_the_cache_keeps_a_bounded_number_of_files(cache: Path) -> None:
    for port in range(8000, 8000 + yamlcache.KEEP + 5):
        load_text(f"broadcast:\n  port: {port}\n", "a.yaml")
    assert len([p for p in cache.iterdir() if p.name.startswith("config-")]) == yamlcache.KEEP


def test_replay_starts_without_pyyaml_once_its_files_loaded(tmp_path: Path) -> None:
    """What the cache is for: a command's start (benchmarks/cli_startup.py)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CACHE_DIRECTORY", None)
    env.pop("DGT_BRIDGE_CONFIG", None)
    probe = (
        "import sys\n"
        "from daemon.commands.replay import configured\n"
        "from daemon.compose import build_core\n"
        "import argparse\n"
        "args = argparse.Namespace(config=None, settle=None, casual=False, chess960=False,"
        " no_clock=False)\n"
        "build_core(configured(args))\n"
        "print('yaml' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    assert [r.stdout.strip() for r in runs] == ["True", "False"], [r.stderr for r in runs]


HALL = """\
speech:
  device: "null"
boards:
  - {id: "1", port: /dev/ttyACM0, speak: true, speech: {device: "hw:1", channel: left}}
  - {id: "2", port: /dev/ttyACM1, speak: true, clock: {time_control: "5+3"}}
"""


def test_a_speaking_board_keeps_its_own_earphone_when_read_back(cache: Path) -> None:
    # The unit keeps the parsed file (CacheDirectory=): from the second start on, a
    # hall's speaking board read back from the cache played in the section's device,
    # another blind player's earphone, and lost its own clock keys too.
    first = load_text(HALL, "hall.yaml")
    second = load_text(HALL, "hall.yaml")
    for settings in (first, second):
        one, two = settings.boards
        assert one.speech is not None and (one.speech.device, one.speech.channel) == (
            "hw:1",
            "left",
        )
        assert two.speech is not None and two.speech.device == "null"
        assert two.clock is not None and two.clock.time_control == "5+3"
    assert second == first
