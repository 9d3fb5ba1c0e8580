"""The configuration file: typed settings, and mistakes named with file, line and key."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from daemon.config import ConfigError, Settings, load_file, load_text, settable_fields
from daemon.files import resources

SHIPPED = resources.default_config_file()


def error_of(text: str, environ: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_text(text, "hall.yaml", environ)
    return caught.value


def test_the_shipped_file_is_valid_and_states_the_defaults() -> None:
    shipped = load_file(SHIPPED, environ={})
    defaults = Settings()
    for section in ("board", "clock", "rules", "speech", "broadcast", "game", "storage"):
        assert getattr(shipped, section) == getattr(defaults, section), section


def _key_paths(cls: type, prefix: str) -> list[str]:
    paths = []
    for name, f in settable_fields(cls).items():
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        paths.append(f"{prefix}.{name}")
        if dataclasses.is_dataclass(default):
            paths += _key_paths(type(default), f"{prefix}.{name}")
    return paths


def test_the_shipped_file_shows_every_key_with_a_comment() -> None:
    data = yaml.safe_load(SHIPPED.read_text())
    lines = SHIPPED.read_text().splitlines()
    defaults = Settings()
    missing = []
    for section in ("board", "clock", "rules", "speech", "broadcast", "game", "storage"):
        for path in _key_paths(type(getattr(defaults, section)), section):
            node = data
            for part in path.split("."):
                if not isinstance(node, dict) or part not in node:
                    missing.append(path)
                    break
                node = node[part]
    assert not missing, f"keys not in the shipped file: {missing}"
    # Each section's first key follows a comment: a user reads what it means.
    for number, line in enumerate(lines):
        if line and not line.startswith((" ", "#")) and line.endswith(":"):
            following = lines[number + 1].strip()
            assert following.startswith("#"), f"section {line} starts without a comment"


def test_unknown_key_names_file_line_key_and_the_known_keys() -> None:
    error = error_of("board:\n  port: auto\n  orientaton: flipped\n")
    assert (error.source, error.line, error.key) == ("hall.yaml", 3, "board.orientaton")
    assert "unknown key" in str(error) and "orientation" in str(error)
    assert str(error).startswith("hall.yaml, line 3: board.orientaton:")


def test_unknown_section_is_refused() -> None:
    error = error_of("board: {}\nspeach:\n  rate: 100\n")
    assert (error.line, error.key) == (2, "speach")
    assert "speech" in error.message


def test_wrong_type_says_what_is_expected() -> None:
    error = error_of("broadcast:\n  port: eighty\n")
    assert (error.line, error.key) == (2, "broadcast.port")
    assert "expected a whole number" in error.message and "'eighty'" in error.message


def test_wrong_type_deep_in_a_nested_section() -> None:
    error = error_of("broadcast:\n  mqtt:\n    enabled: yes please\n")
    assert (error.line, error.key) == (3, "broadcast.mqtt.enabled")
    assert "true or false" in error.message


def test_bad_value_from_a_parts_own_validation_points_at_its_line() -> None:
    error = error_of("speech:\n  engine: auto\n  volume: 3.5\n")
    assert (error.line, error.key) == (3, "speech.volume")
    assert "between 0 and 1" in error.message


def test_bad_value_of_a_choice_lists_the_choices() -> None:
    error = error_of("rules:\n  mode: blitz\n")
    assert (error.line, error.key) == (2, "rules.mode")
    assert "'tournament'" in error.message and "'casual'" in error.message


def test_bad_time_control_is_refused_at_start() -> None:
    error = error_of("clock:\n  time_control: ninety minutes\n")
    assert error.key == "clock.time_control" and error.line == 2


def test_bad_yaml_names_the_line() -> None:
    error = error_of("board:\n  port: auto\n speech: [\n")
    assert error.line is not None and error.line >= 2
    assert "not valid YAML" in error.message


def test_a_key_given_twice_is_refused() -> None:
    error = error_of("game:\n  white: A\n  white: B\n")
    assert (error.line, error.key) == (3, "game.white")


def test_environment_overrides_single_keys() -> None:
    settings = load_text(
        "broadcast:\n  port: 8080\n",
        "hall.yaml",
        {
            "DGT_BRIDGE_BROADCAST__PORT": "9000",
            "DGT_BRIDGE_BROADCAST__MQTT__ENABLED": "true",
            "DGT_BRIDGE_GAME__WHITE": "Anna Blind",
            "DGT_BRIDGE_SPEECH__SIDES": "[black]",
            "HOME": "/root",
        },
    )
    assert settings.broadcast.port == 9000
    assert settings.broadcast.mqtt.enabled is True
    assert settings.game.white == "Anna Blind"
    assert settings.speech.sides == ("black",)


def test_an_environment_override_of_a_text_key_is_taken_as_written() -> None:
    """A variable is text: ``null`` is ALSA's null device, ``5`` a round, ``yes`` a name."""
    env = {
        "DGT_BRIDGE_SPEECH__DEVICE": "null",
        "DGT_BRIDGE_GAME__ROUND": "5",
        "DGT_BRIDGE_GAME__WHITE": "yes",
    }
    settings = load_text("", "test.yaml", environ=env)
    assert settings.speech.device == "null"
    assert settings.game.round == "5"
    assert settings.game.white == "yes"


def test_a_bad_environment_override_names_the_variable() -> None:
    error = error_of("", {"DGT_BRIDGE_RULES__SETTLE_TIME": "soon"})
    assert error.source == "environment DGT_BRIDGE_RULES__SETTLE_TIME"
    assert error.key == "rules.settle_time" and "a number" in error.message


def test_check_config_command(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("board:\n  port: /dev/dgt-board\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("board:\n  port: /dev/dgt-board\n  speed: 9600\n")
    ok = subprocess.run(
        [sys.executable, "-m", "daemon", "check-config", str(good)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0 and "OK" in ok.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "daemon", "check-config", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert f"{bad}, line 3: board.speed: unknown key" in refused.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "daemon", "check-config", str(tmp_path / "none.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_vocabulary_that_cannot_be_read_is_refused_at_its_line(tmp_path: Path) -> None:
    error = error_of(f"speech:\n  form: short\n  vocabulary: {tmp_path / 'klingon.yaml'}\n")
    assert (error.line, error.key) == (3, "speech.vocabulary")
    assert "klingon.yaml" in error.message


def test_a_vocabulary_that_is_a_directory_is_named_without_repeating_the_key(
    tmp_path: Path,
) -> None:
    error = error_of(f"speech:\n  vocabulary: {tmp_path}\n")
    assert (error.line, error.key) == (2, "speech.vocabulary")
    assert error.message.startswith(f"{tmp_path}: cannot be read"), error.message


def test_run_refuses_to_start_on_a_bad_configuration(tmp_path: Path) -> None:
    bad = tmp_path / "dgt-bridge.yaml"
    bad.write_text("rules:\n  settle_time: -1\n")
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "run", "--config", str(bad), "--no-speech"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert f"configuration error: {bad}, line 2: rules.settle_time:" in result.stderr
    assert "Traceback" not in result.stderr
