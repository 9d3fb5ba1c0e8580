"""What the ``speech:`` section of the configuration decides.

The config loader (``daemon/config/``) fills a ``SpeechSettings`` from YAML;
every field has the default a first-time user should get.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from drivers.records import FrozenRecord

#: Event types the announcer can speak (the ``type`` of event-feed dicts).
SPEAKABLE_EVENTS = (
    "move",
    "touch",
    "irregularity",
    "position_restored",
    "takeback",
    "game_start",
    "game_end",
    "game_resumed",
    "flag",
    "draw_claimable",
    "penalty",
    "connection",
    "info_request",
)

ENGINES = ("auto", "pyttsx3", "espeak-ng", "text")
#: Where pyttsx3 runs (``speech.synthesis``).
SYNTHESIS = ("auto", "thread", "process")

#: The shipped per-file player and the shipped running player (``speech.player``,
#: ``speech.stream_player``).
DEFAULT_PLAYER = ("aplay", "-q", "{device_option}", "{file}")
DEFAULT_STREAM_PLAYER = (
    "aplay", "-q", "{device_option}", "-t", "raw", "-f", "S16_LE", "-r", "{rate}",
    "-c", "{channels}", "--buffer-time=100000",
)  # fmt: skip


#: The quickest rate a move phrase is still understood at. Judged by a recogniser
#: standing in for the ear (benchmarks/speech_intelligibility.py, RESULTS.md): move
#: phrases are recognised as well at 150-300 words a minute as at 150, and the
#: curve breaks past 300 (330: half as many, 360: a fifth).
MAX_UNDERSTOOD_RATE = 300


@dataclass(eq=False, repr=False)
class OutputSettings(FrozenRecord):
    """One player's earphone: where his announcements go and which ones he hears.

    player: "white" or "black", whose earphone this is; his questions (clock
        buttons, ``own_side``, or a request ``by`` him) are answered here only.
    device: the ALSA device (empty: the speech section's ``device``).
    channel: "both", "left" or "right" of a stereo output (two players on one card).
    sides: whose moves he hears (empty: the speech section's ``sides``).
    announce: which events he hears (empty: the speech section's ``announce``).
    """

    player: str = "white"
    device: str = ""
    channel: str = "both"
    sides: tuple[str, ...] = ()
    announce: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.player not in ("white", "black"):
            raise ValueError(f"speech.outputs: player 'white' or 'black', not {self.player!r}")
        if self.channel not in ("both", "left", "right"):
            raise ValueError(
                f"speech.outputs: channel 'both', 'left' or 'right', not {self.channel!r}"
            )


@dataclass(eq=False, repr=False)
class SpeechSettings(FrozenRecord):
    """How and what the announcer speaks.

    engine: "pyttsx3" (espeak-ng through pyttsx3, see ``synthesis``),
        "espeak-ng" (the espeak-ng program, lowest latency), "text" (print the
        written text, no audio) or "auto" (pyttsx3 if it loads, else espeak-ng if
        installed, else text). Whatever is chosen, an engine that fails falls back
        to the next one in that order, so an announcement is never lost.
    synthesis: where pyttsx3 runs: "thread" (a thread of the daemon; 4-5 MB less
        on a Pi, ``daemon.speech.synthesis``; every output of the process takes its
        turn in it), "process" (a worker process of its own: a crash in espeak-ng
        ends only the worker, a hung synthesis is killed, and each output has its
        own worker, in parallel) or "auto" (``SynthesisSeat``: the thread for the
        first output, a worker for each further one).
    voice: the espeak-ng voice ("de", "en", "es", "de+f3"...); empty: the
        vocabulary's own ``voice``. Always set explicitly, as pyttsx3 starts in English.
    rate: words per minute (espeak-ng's unit; 175 is its default speed).
    max_rate: the quickest rate a move may be said at when moves come faster than
        speech (``daemon.speech.schedule``); equal to ``rate``: never quicker.
    volume: 0.0 to 1.0.
    device: the ALSA device for playing (``aplay -D``); empty: ALSA's default.
        "null" plays into nothing (tests, machines without a sound card).
    channel: "both", or "left" / "right": the sound on that channel of a stereo
        output only (two players, one earphone each, on one sound card).
    player: the command that plays a WAV file, as a list; "{device}" and "{file}"
        are filled in (default: aplay, quiet, on ``device``). Used when
        ``stream_player`` is empty, and when it is set here but ``stream_player``
        is left as shipped (``streams``).
    stream_player: the command kept running that plays raw 16-bit little-endian
        PCM from its standard input, as a list; "{device_option}", "{device}",
        "{rate}" (samples a second) and "{channels}" are filled in. Each phrase is
        written into it as it is synthesised: the first sound of a move does not
        wait for a player to start (issue 19). Empty: one ``player`` per phrase.
    vocabulary: a shipped vocabulary name ("appendix-e", "en", "es") or the path of
        a user's YAML file.
    files: how the files are named: empty, the vocabulary's own names (en: the
        NATO alphabet, es: the Appendix E names in Spanish); or one of its
        ``file_alphabets`` ("appendix-e", "letters"; es: "radio", "letters").
    form: "short" (SAN order, "Springer Felix drei") or "long" (from and to
        square, "Springer Gustav eins Felix drei").
    say_pawn: say "Bauer" for pawn moves ("Bauer Eva vier") or not ("Eva vier").
    announce: which event types are spoken (see SPEAKABLE_EVENTS); an
        ``info_request`` is answered only when listed.
    sides: whose moves are spoken, "white" and/or "black": a blind player may want
        only the opponent's moves. Irregularities and game events are always spoken.
    stale_after: seconds after which a queued announcement that was not yet spoken
        is dropped as out of date (a move is superseded earlier by the next move).
    own_side: the blind player's colour, "white" or "black" (empty: unknown). A
        clock button does not say who pressed it; the clock answer then gives this
        side's time first ("own time first"), else White's, and with ``outputs``
        the answer goes to this player's earphone (empty: the first output's).
    max_interruptions: an answer interrupted by more moves than this is dropped
        (and the player is told); fewer, and it goes on after the moves.
    repeat_window: seconds within which a second "last move" press says the last
        few moves instead.
    repeat_moves: how many half-moves that second press says.
    time_left: the clock answer also gives each player's time left, after what
        E.9.d asks for (the moves completed and the time used by both players).
    outputs: one entry per player's earphone (``OutputSettings``); empty: one
        output for everything.
    tell_touches: Appendix E.9.e: the blind player is told when the other player
        touched one of his own pieces and put it back (a touch that may bind him,
        4.3a) and when a flag falls, whatever ``announce`` says.
    """

    engine: str = "auto"
    synthesis: str = "auto"
    voice: str = ""
    rate: int = 150
    max_rate: int = MAX_UNDERSTOOD_RATE
    volume: float = 1.0
    device: str = ""
    channel: str = "both"
    player: tuple[str, ...] = DEFAULT_PLAYER
    stream_player: tuple[str, ...] = DEFAULT_STREAM_PLAYER
    vocabulary: str = "appendix-e"
    files: str = ""
    form: str = "short"
    say_pawn: bool = True
    announce: tuple[str, ...] = field(default=SPEAKABLE_EVENTS)
    sides: tuple[str, ...] = ("white", "black")
    stale_after: float = 30.0
    own_side: str = ""
    max_interruptions: int = 2
    repeat_window: float = 4.0
    repeat_moves: int = 4
    time_left: bool = False
    tell_touches: bool = False
    outputs: tuple[OutputSettings, ...] = ()
    _listener: str = ""  # set by ``per_output``: the player of this output

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"speech.engine must be one of {', '.join(ENGINES)}: {self.engine!r}")
        if self.synthesis not in SYNTHESIS:
            raise ValueError(
                f"speech.synthesis must be 'auto', 'thread' or 'process': {self.synthesis!r}"
            )
        if self.form not in ("short", "long"):
            raise ValueError(f"speech.form must be 'short' or 'long': {self.form!r}")
        if not 0.0 <= float(self.volume) <= 1.0:
            raise ValueError(f"speech.volume must be between 0 and 1: {self.volume!r}")
        if int(self.rate) <= 0:
            raise ValueError(f"speech.rate must be positive words per minute: {self.rate!r}")
        if int(self.max_rate) > MAX_UNDERSTOOD_RATE or int(self.rate) > MAX_UNDERSTOOD_RATE:
            key = "max_rate" if int(self.max_rate) > MAX_UNDERSTOOD_RATE else "rate"
            raise ValueError(
                f"speech.{key} ({getattr(self, key)!r}) is quicker than a move phrase is"
                f" understood: at most {MAX_UNDERSTOOD_RATE} words per minute"
                " (benchmarks/speech_intelligibility.py)"
            )
        if int(self.max_rate) < int(self.rate):
            raise ValueError(
                f"speech.max_rate ({self.max_rate!r}) must be at least speech.rate ({self.rate!r})"
            )
        if self.channel not in ("both", "left", "right"):
            raise ValueError(f"speech.channel: 'both', 'left' or 'right', not {self.channel!r}")
        unknown = set(self.announce) - set(SPEAKABLE_EVENTS)
        if unknown:
            raise ValueError(
                f"speech.announce: unknown event type {sorted(unknown)[0]!r}"
                f" (known: {', '.join(SPEAKABLE_EVENTS)})"
            )
        if self.own_side not in ("", "white", "black"):
            raise ValueError(f"speech.own_side: 'white', 'black' or empty, not {self.own_side!r}")
        if self.repeat_moves < 1 or self.max_interruptions < 0 or self.repeat_window < 0:
            raise ValueError(
                "speech.repeat_moves must be at least 1, speech.max_interruptions and"
                " speech.repeat_window not negative"
            )
        players = [output.player for output in self.outputs]
        if len(players) != len(set(players)):
            raise ValueError("speech.outputs: one output per player")
        for output in self.outputs:
            if set(output.announce) - set(SPEAKABLE_EVENTS):
                raise ValueError(
                    f"speech.outputs: unknown event type in announce of {output.player}"
                )
        bad_sides = set(self.sides) - {"white", "black"}
        if bad_sides:
            raise ValueError(
                f"speech.sides: only 'white' and 'black', not {sorted(bad_sides)[0]!r}"
            )

    def per_output(self) -> list[SpeechSettings]:
        """The settings of each output: this section's, overridden by each entry."""
        if not self.outputs:
            return [self]
        asker = self.own_side or self.outputs[0].player
        return [
            replace(
                self,
                device=output.device or self.device,
                channel=output.channel,
                sides=output.sides or self.sides,
                announce=output.announce or self.announce,
                own_side=asker,
                outputs=(),
                _listener=output.player,
            )
            for output in self.outputs
        ]

    @property
    def listener(self) -> str:
        """The player whose earphone this is ("" when one output serves both)."""
        return self._listener

    def hears_requests_of(self, asker: str | None) -> bool:
        """Whether this output says the answers to ``asker``'s questions."""
        return not self._listener or self._listener == (asker or self.own_side)

    @property
    def streams(self) -> bool:
        """Whether phrases stream into a running player (``stream_player``).

        Not when it is empty; nor when a site set its own per-file ``player``
        (paplay, a Bluetooth wrapper) and left ``stream_player`` as shipped: the
        shipped one is plain aplay, and would silently bypass the player the site
        chose, so a blind player could hear nothing after an upgrade."""
        if not self.stream_player:
            return False
        return self.player == DEFAULT_PLAYER or self.stream_player != DEFAULT_STREAM_PLAYER

    def player_command(self, wav_file: str) -> list[str]:
        """The player's argv for one file ("{device_option}" vanishes without a device)."""
        return self._command(self.player, {"{file}": wav_file})

    def stream_player_command(self, rate: int, channels: int) -> list[str]:
        """The running player's argv for ``rate`` samples a second on ``channels``."""
        return self._command(self.stream_player, {"{rate}": str(rate), "{channels}": str(channels)})

    def _command(self, template: tuple[str, ...], fields: dict[str, str]) -> list[str]:
        """A player's argv: "{device_option}" becomes "-D <device>" (or nothing
        without a device), "{device}" and ``fields`` are filled in."""
        argv: list[str] = []
        for part in template:
            if part == "{device_option}":
                if self.device:
                    argv += ["-D", self.device]
                continue
            part = part.replace("{device}", self.device)
            for name, value in fields.items():
                part = part.replace(name, value)
            argv.append(part)
        return argv


class SynthesisSeat:
    """The process's one pyttsx3 thread, handed out to the outputs that speak.

    libespeak-ng is one per process, so outputs in the thread take turns: a move on
    one board (or one earphone) would wait for another's whole phrase to be
    synthesised, 0.2 s and more on a Pi Zero's budget. With ``speech.synthesis:
    auto`` the first output gets the thread (the memory a second interpreter would
    cost is saved where it matters, beside one board) and every further one a worker
    process of its own, in parallel. One seat serves a whole daemon: the many-boards
    hall passes its own to every board's announcers."""

    def __init__(self) -> None:
        self.taken = False

    def resolve(self, synthesis: str) -> str:
        """Where an output configured with ``synthesis`` runs: "thread" or "process"."""
        if synthesis == "auto":
            synthesis = "process" if self.taken else "thread"
        if synthesis == "thread":
            self.taken = True
        return synthesis
