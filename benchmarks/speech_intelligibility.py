"""Which speech rates are still understood: espeak-ng's move phrases, recognised back.

No listening panel is at hand, so a recogniser stands in for the ear: PocketSphinx
(its US English acoustic model ships in the PyPI package) with a grammar of move
phrases, the way a blind player knows what a move may be. Each real move of the
shared games, in the English vocabulary, is synthesised by espeak-ng at each rate
and recognised; a phrase counts as understood when every word comes back. A
recogniser is kinder than a tired ear in one way (it knows the grammar) and
harsher in another (no context, no practice), so the figure is where the curve
breaks, not an absolute: the cap sits at the highest rate that still keeps as
many phrases as the normal rate does, less 5 points.

    python -m benchmarks.speech_intelligibility [--moves N] [--rates 150,300,...]
"""

from __future__ import annotations

import argparse
import array
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import chess
import chess.pgn

from daemon.speech.phrases import make_describer
from daemon.speech.vocabulary import load_vocabulary

SHARED_GAMES = Path(__file__).resolve().parents[2] / "shared" / "data" / "games.pgn"
EXTRA_WORDS = {  # not in CMUdict
    "kingside": "K IH NG S AY D",
    "queenside": "K W IY N S AY D",
    "passant": "P AE S AA N T",
}


def grammar(vocabulary) -> str:
    def alt(words) -> str:
        return " | ".join(sorted({w.lower() for w in words}))

    return f"""#JSGF V1.0;
grammar moves;
<piece> = {alt(vocabulary.pieces.values())};
<file> = {alt(vocabulary.files)};
<rank> = {alt(vocabulary.ranks)};
<square> = <file> <rank>;
<end> = check | checkmate;
public <move> = (castles (kingside | queenside) | <piece> [<file> | <rank> | <square>]
    [takes] <square> [en passant] [promotes to <piece>]) [<end>];
"""


def phrases(count: int) -> list[str]:
    describe = make_describer("en")
    out: list[str] = []
    with open(SHARED_GAMES, encoding="utf-8") as pgn:
        while len(out) < count:
            game = chess.pgn.read_game(pgn)
            if game is None:
                break
            board = game.board()
            for index, move in enumerate(game.mainline_moves()):
                if index % 7 == 3 and len(out) < count:
                    out.append(describe(board, move))
                board.push(move)
    return out


def samples_16k(path: Path) -> bytes:
    """espeak-ng's 22,050 Hz mono WAV at 16 kHz (linear interpolation), with 0.3 s of
    silence either side, as the recogniser wants it."""
    with wave.open(str(path)) as wav:
        rate = wav.getframerate()
        data = array.array("h", wav.readframes(wav.getnframes()))
    n = int(len(data) * 16000 / rate)
    out = array.array("h", bytes(2 * 4800))
    for i in range(n):
        x = i * rate / 16000
        j = int(x)
        k = min(j + 1, len(data) - 1)
        out.append(int(data[j] + (data[k] - data[j]) * (x - j)))
    out.extend(array.array("h", bytes(2 * 4800)))
    return out.tobytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--rates", default="150,250,300,360,420,480,560")
    args = parser.parse_args(argv)
    try:
        from pocketsphinx import Config, Decoder
    except ImportError:
        print("needs pocketsphinx (pip install pocketsphinx)", file=sys.stderr)
        return 2
    vocabulary = load_vocabulary("en")
    config = Config(loglevel="FATAL")
    decoder = Decoder(config)
    for word, phones in EXTRA_WORDS.items():
        if decoder.lookup_word(word) is None:
            decoder.add_word(word, phones, True)
    decoder.add_jsgf_string("moves", grammar(vocabulary))
    decoder.activate_search("moves")
    texts = phrases(args.moves)
    print(f"{len(texts)} English move phrases of the shared games, espeak-ng voice en-us")
    print("rate (wpm) | understood | words right")
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "p.wav"
        for rate in (int(r) for r in args.rates.split(",")):
            whole = words_right = words = 0
            for text in texts:
                subprocess.run(
                    ["espeak-ng", "-v", "en-us", "-s", str(rate), "-w", str(wav), text], check=True
                )
                decoder.start_utt()
                decoder.process_raw(samples_16k(wav), full_utt=True)
                decoder.end_utt()
                heard = (decoder.hyp().hypstr if decoder.hyp() else "").split()
                said = text.lower().split()
                whole += heard == said
                words += len(said)
                words_right += sum(a == b for a, b in zip(heard, said, strict=False))
            print(
                f"{rate} | {whole}/{len(texts)} ({100 * whole / len(texts):.0f}%) |"
                f" {100 * words_right / words:.0f}%"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
