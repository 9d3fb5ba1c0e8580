"""Vocabulary files: a new language is one YAML file; a bad one is refused clearly."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest
import yaml

from daemon.speech.phrases import make_describer
from daemon.speech.vocabulary import (
    available_vocabularies,
    load_vocabulary,
    shipped_vocabularies_dir,
)


def shipped_data(name: str = "appendix-e") -> dict:
    return yaml.safe_load((shipped_vocabularies_dir() / f"{name}.yaml").read_text("utf-8"))


def write(tmp_path: Path, data: dict, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_three_shipped_vocabularies_load() -> None:
    assert {"appendix-e", "en", "es"} <= set(available_vocabularies())
    for name in ("appendix-e", "en", "es"):
        assert load_vocabulary(name).source.endswith(f"{name}.yaml")


def test_appendix_e_words_are_the_rules_own() -> None:
    vocabulary = load_vocabulary()
    assert vocabulary.files == (
        "Anna", "Bella", "Cesar", "David", "Eva", "Felix", "Gustav", "Hector"
    )  # fmt: skip
    assert vocabulary.ranks == (
        "eins", "zwei", "drei", "vier", "fuenf", "sechs", "sieben", "acht"
    )  # fmt: skip
    assert [vocabulary.pieces[p] for p in "KQRBNP"] == [
        "Koenig", "Dame", "Turm", "Laeufer", "Springer", "Bauer"
    ]  # fmt: skip
    assert vocabulary.words["castle_short"] == "Kurze Rochade"
    assert vocabulary.words["castle_long"] == "Lange Rochade"
    assert vocabulary.voice == "de"


def test_a_user_adds_a_language_with_a_yaml_file_alone(tmp_path: Path) -> None:
    data = shipped_data("en")
    data.update(name="Nederlands", language="nl", voice="nl")
    data["pieces"] = {
        "king": "Koning", "queen": "Dame", "rook": "Toren",
        "bishop": "Loper", "knight": "Paard", "pawn": "Pion",
    }  # fmt: skip
    data["ranks"] = ["een", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht"]
    data["words"]["capture"] = "slaat"
    data["files"] = list("abcdefgh")
    path = write(tmp_path, data, "nl.yaml")
    describe = make_describer(str(path))
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    assert describe(board, chess.Move.from_uci("f1b5")) == "Loper b vijf"
    board = chess.Board("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    assert describe(board, chess.Move.from_uci("e4d5")) == "Pion e slaat d vijf"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d.pop("files"), "missing key 'files'"),
        (lambda d: d["ranks"].pop(), "key 'ranks' must be a list of 8 words"),
        (lambda d: d["pieces"].pop("knight"), "missing key 'pieces.knight'"),
        (lambda d: d["words"].pop("mate"), "missing key 'words.mate'"),
        (lambda d: d["words"].update(check=""), "key 'words.check' must not be empty"),
        (lambda d: d["messages"].pop("illegal_move"), "missing key 'messages.illegal_move'"),
        (
            lambda d: d["messages"].update(flag="Zeit: {seite}"),
            "key 'messages.flag' uses {seite}; allowed placeholders: {side}",
        ),
        (lambda d: d["messages"].update(flag="Zeit: {side"), "key 'messages.flag': bad template"),
        (lambda d: d["reasons"].pop("stalemate"), "missing key 'reasons.stalemate'"),
        (lambda d: d.update(pronunciation=["fuenf"]), "key 'pronunciation' must be a mapping"),
        (lambda d: d.update(colours="Weiß"), "key 'colours' must be a mapping"),
    ],
)
def test_a_bad_vocabulary_names_the_file_and_the_key(tmp_path: Path, change, named: str) -> None:
    data = shipped_data()
    change(data)
    path = write(tmp_path, data)
    with pytest.raises(ValueError) as caught:
        load_vocabulary(str(path))
    message = str(caught.value)
    assert str(path) in message
    assert named in message


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("files: [Anna, Bella\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.yaml: not valid YAML"):
        load_vocabulary(str(broken))
    with pytest.raises(
        ValueError, match=r"vocabulary 'klingon': no file .*klingon.yaml.*appendix-e"
    ):
        load_vocabulary("klingon")
