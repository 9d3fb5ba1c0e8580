"""What is said next, phrase by phrase: a pure schedule on simulated time.

A blind player follows the game by ear, so the schedule guarantees, in this order:

1. **Every move is heard in full.** A move phrase is never cut, never dropped for a
   later move, and never waits behind more than the one phrase already playing.
   When moves come faster than speech, the moves waiting are said together in one
   phrase ("Springer Felix drei; Bauer Eva fuenf": one synthesis, no gap between
   them), and each move phrase gets a ``budget`` of seconds from the pace of the
   game, which the speaker meets by a quicker rate (``daemon.speech.rate``). So the
   lag stays bounded instead of growing with every move.
2. **Moves and important messages first**, in the order they happened
   (irregularities, game end, flag, takeback... are never dropped either).
3. **An answer gives way at the next phrase boundary.** An answer or a board
   reading is a list of short phrases, *composed when each phrase is spoken* (a
   clock answer gives the times of now, not of when it was asked). A move that
   comes meanwhile is said after the phrase playing; then the answer goes on, with
   "Weiter" said first, or, after ``max_interruptions`` moves or ``stale_after``
   seconds, is dropped and the player hears that it was ("Stellung abgebrochen").
   In fast play the next answer phrase waits until the moves' lag is down again
   (``behind``), so answers take the gaps between moves and never pile lag up.
   A board reading (``patient``) also goes on beyond the gap: its phrase then
   gives way to a move at once (``give_way``: cut, the move said without waiting,
   the phrase said again whole), so it uses the whole time between two moves.
4. An important message may come in ``parts`` (an irregularity's sentences): a
   move waiting is said at the boundary, then the message goes on, without its
   ``fix_parts`` (the move shows the board was put right).
5. ``info`` (position restored, draw claimable) goes stale with the next move.

Nothing is dropped silently: every outcome (heard, dropped, cancelled) is kept in
``outcomes`` for the announcer to log and journal. No clock and no I/O: ``now`` is
an argument, so tests and the benchmark run it on simulated time.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from drivers.records import FrozenRecord, Record

Kind = Literal["move", "answer", "important", "info", "notice"]

#: An answer's phrases as the game stands now: (key, written text) pairs, or
#: (key, text, text to say after an interruption: with its context, "Weiß: Türme...").
#: The keys stay the same while the game goes on ("white:R:0"), so an answer that
#: was interrupted goes on with the first phrase not yet said.
Composer = Callable[[], list[tuple[str, ...]]]


#: How an announcement ended.
OutcomeKind = Literal["heard", "failed", "dropped", "cancelled", "cut"]


@dataclass(eq=False, repr=False, slots=True)
class Announcement(Record):
    """One thing to say: fixed ``text``, or an answer's ``compose``."""

    id: int
    kind: Kind
    created: float
    text: str = ""
    compose: Composer | None = None
    ply: int | None = None  # the half-move a move announcement is about
    takeback_ply: int | None = None  # a takeback: moves from this ply on are void
    resume_text: str = ""  # said before an interrupted answer goes on ("Weiter")
    #: an important message's phrases (its sentences), each said whole; a move waiting
    #: is said at the boundary, then the message goes on with ``resume_text`` first.
    #: Empty: the message is one phrase.
    parts: tuple[str, ...] = ()
    #: the parts that only say how to put the board right: not said once a move has
    #: been made since (a move is only recognised from a correct position).
    fix_parts: frozenset[int] = frozenset()
    dropped_text: str = ""  # said when an answer is given up ("Stellung abgebrochen")
    #: the parts that say a claim may be made (touch-move, 4.3): said only while it is
    #: open; 4.7 takes it away once the claimant (``claimant``) touches a piece.
    claim_parts: frozenset[int] = frozenset()
    claimant: str = ""
    claim_lost: bool = False
    #: a list of what is wrong on the board ("displaced_pieces"): a newer one of the
    #: same key makes it out of date, and what is left of it is not said.
    supersedes: str = ""
    superseded: bool = False
    #: an answer that is never given up for moves or for waiting (a board reading:
    #: in blitz it is read in the gaps between moves and resumes where it stopped;
    #: dropped, it left Black's pieces unread). A newer one replaces it.
    patient: bool = False
    spoken_keys: set[str] = field(default_factory=set)
    interruptions: int = 0
    resume_pending: bool = False


@dataclass(eq=False, repr=False, slots=True)
class Phrase(FrozenRecord):
    """One utterance, spoken whole: one WAV, never cut by the schedule."""

    kind: Kind
    written: str
    items: tuple[Announcement, ...]
    composed_at: float
    budget: float | None = None  # seconds it should take (moves in fast play)
    key: str = ""  # an answer phrase's key (the last one, when several are said together)
    last: bool = True  # the last phrase of its announcement
    keys: tuple[str, ...] = ()  # an answer's phrases said in this one utterance
    #: a board reading's phrase said beyond the gap between moves: a move (or an
    #: important message) that comes meanwhile cuts it at once, and it is said
    #: again whole later (``give_way``); never a move's phrase.
    gives_way: bool = False

    @property
    def plies(self) -> tuple[int, ...]:
        return tuple(item.ply for item in self.items if item.ply is not None)


@dataclass(eq=False, repr=False, slots=True)
class Outcome(FrozenRecord):
    """What became of an announcement, for the log and the journal."""

    outcome: OutcomeKind
    kind: Kind
    text: str
    at: float
    reason: str = ""
    plies: tuple[int, ...] = ()


@dataclass(eq=False, repr=False, slots=True)
class Pacing(FrozenRecord):
    """How move phrases keep up with the game; see ``SpeechSchedule.budget``.

    share: the part of the recent interval between moves a move phrase may take
        (the rest is margin for the next move, so no backlog forms).
    min_budget: no budget below this (the rate has a limit anyway).
    max_combined: at most this many waiting moves in one phrase.
    pace_window: how many recent intervals between moves give the pace.
    caught_up: an answer phrase starts only when the last move phrase ended at
        most this long after its move (or the pace, if longer); see ``behind``.
    slow_pace: moves this far apart (classical) leave answers unhurried.
    gap_share: in fast play an answer phrase must end within this part of the
        shortest recent interval after the last move (see ``gap``), and is hurried
        to fit.
    lag_target: in fast play a move phrase should end this long after its move at
        the latest: a move that waited (behind the phrase playing, or a burst of
        moves) gets a smaller budget, so it is said quicker and catches up.
    answer_wait: in fast play, how long a move that comes as early as the recent
        ones did may wait for an answer phrase to end (see ``gap``). Its own
        phrase, said at ``max_rate`` as a move that waited is, takes 0.5-0.8 s, so
        its lag stays within about 1.3 s.
    leisure_chunk: at leisure (no ``gap``), at most this many of an answer's phrases
        of one group ("white:P": White's pawns) in one utterance ("Bauern Anna zwei,
        Bella zwei, Cesar zwei"); in fast play, as many as the gap holds.
    give_way_grace: a board reading's phrase said beyond the gap (``give_way``) is
        not cut for a move when it is due to end within this many seconds: the
        move waits that little, and the phrase is not said twice.
    """

    share: float = 0.5
    min_budget: float = 0.45
    max_combined: int = 3
    pace_window: int = 4
    caught_up: float = 1.0
    slow_pace: float = 4.0
    gap_share: float = 0.9
    lag_target: float = 1.0
    answer_wait: float = 0.6
    leisure_chunk: int = 3
    give_way_grace: float = 0.3


class SpeechSchedule:
    """The announcements waiting, and which phrase is said next."""

    def __init__(
        self,
        stale_after: float = 30.0,
        max_interruptions: int = 2,
        pacing: Pacing | None = None,
        joiner: str = "; ",
        max_rate: int = 300,  # settings.MAX_UNDERSTOOD_RATE
    ) -> None:
        self.stale_after = stale_after
        self.max_rate = max_rate
        self.max_interruptions = max_interruptions
        self.pacing = pacing or Pacing()
        self.joiner = joiner
        self.pending: list[Announcement] = []
        self.playing: Phrase | None = None
        self.outcomes: list[Outcome] = []  # the caller drains it
        self._move_times: list[float] = []
        self._spoken_in: int | None = 1  # half-moves until the next move that is said
        self._last_move_lag: float | None = None  # of the last move phrase heard
        self._notice_id = -1

    # -- what comes in ---------------------------------------------------------------

    def note_move(self, t: float, spoken_in: int | None = 1) -> None:
        """A move was made (spoken or not: the pace is the game's, not the speech's).

        ``spoken_in``: how many half-moves away the next move that is said is (2 when
        only the opponent's moves are said and the opponent has just moved: the
        player's own thinking time is a gap for answers; None when no move is said).
        """
        self._move_times.append(t)
        self._spoken_in = spoken_in
        del self._move_times[: -(self.pacing.pace_window + 1)]

    def touched(self, side: str) -> None:
        """``side`` touched a piece (made a move): a claim of his still to be announced
        is lost (4.7), so it is not said."""
        for old in self.pending:
            if old.claimant and old.claimant == side:
                old.claim_lost = True

    def offer(self, item: Announcement, now: float) -> None:
        if item.supersedes:
            for old in self.pending:
                if old.supersedes == item.supersedes:
                    old.superseded = True
        if item.kind == "move":
            self._cancel(now, lambda old: old.kind == "info", "stale after a move")
            if item.ply is not None:  # a correction of a move not yet said replaces it
                self._cancel(
                    now, lambda old: old.kind == "move" and old.ply == item.ply, "corrected"
                )
        if item.takeback_ply is not None:
            ply = item.takeback_ply
            self._cancel(
                now, lambda old: old.kind == "move" and (old.ply or 0) >= ply, "taken back"
            )
        self.pending.append(item)

    def _cancel(self, now: float, stale: Callable[[Announcement], bool], reason: str) -> None:
        keep = []
        for old in self.pending:
            if stale(old):
                self.outcomes.append(
                    Outcome("cancelled", old.kind, old.text, now, reason, _plies(old))
                )
            else:
                keep.append(old)
        self.pending = keep

    # -- what goes out ---------------------------------------------------------------

    @property
    def pace(self) -> float | None:
        """The median of the recent intervals between moves; None before the first.

        Intervals under ``MIN_INTERVAL`` are no pace but a burst (events folded at
        once after a restart, a correction on the heels of its move) and are left out.
        """
        intervals = self._intervals()
        return statistics.median(intervals) if intervals else None

    def _intervals(self) -> list[float]:
        intervals = [b - a for a, b in itertools.pairwise(self._move_times)]
        return [i for i in intervals if i >= MIN_INTERVAL]

    def budget(self, moves: int) -> float | None:
        """Seconds a phrase of ``moves`` moves should take so that speech keeps up."""
        pace = self.pace
        if pace is None:
            return None
        return max(self.pacing.min_budget, self.pacing.share * pace) * moves

    def next(self, now: float) -> Phrase | None:
        """The phrase to say now (None when there is nothing); call ``done`` after it."""
        assert self.playing is None, "one phrase at a time"
        self._expire(now)
        phrase = self._choose(now)
        self.playing = phrase
        return phrase

    def _choose(self, now: float) -> Phrase | None:
        for old in [i for i in self.pending if i.superseded]:
            self.pending.remove(old)
            self.outcomes.append(
                Outcome("dropped", old.kind, old.text, now, "out of date: a newer list came")
            )
        urgent = [i for i in self.pending if i.kind in ("move", "important")]
        if urgent:
            head = urgent[0]
            if head.kind == "move":
                return self._moves(urgent, now)
            if head.parts and head.spoken_keys and urgent[1:2] and urgent[1].kind == "move":
                head.resume_pending = True  # a move waiting goes first, at the boundary
                return self._moves(urgent[1:], now)
            if head.parts:
                return self._part(head, now)
            # hurried in fast play like two moves: same words
            return Phrase(head.kind, head.text, (head,), now, budget=self.budget(2))
        if self.behind(now):
            return None  # the moves' lag first comes down; ``wake_at`` says when to look
        gap = self.gap(now)
        notices = [i for i in self.pending if i.kind == "notice"]
        if notices:  # an answer given up is said before the next answer goes on
            if not self._fits(notices[0].text, gap):
                return None
            return Phrase("notice", notices[0].text, (notices[0],), now, budget=_hurry(gap))
        while True:
            answers = [i for i in self.pending if i.kind == "answer"]
            if not answers:
                break
            started = [a for a in answers if a.spoken_keys]
            answer = started[0] if started else answers[0]
            if answer.interruptions > self.max_interruptions and not answer.patient:
                self._drop(answer, now, "interrupted by moves")
                return self._choose(now)  # its notice comes next
            phrases = [p for p in (answer.compose() if answer.compose else []) if p[1]]
            remaining = [p for p in phrases if p[0] not in answer.spoken_keys]
            if not remaining:
                self.pending.remove(answer)
                self.outcomes.append(Outcome("heard", "answer", answer.text, now))
                continue
            text = remaining[0][1]
            if answer.resume_pending:  # the text after an interruption, "Weiter" first
                text = f"{answer.resume_text} {remaining[0][2 if len(remaining[0]) > 2 else 1]}"
                text = text.strip()
            gives_way = not self._fits(text, gap)
            if gives_way and not answer.patient:
                return None  # waits for a longer gap between moves (``wake_at``)
            answer.resume_pending = False
            keys, text = self._together(remaining, text, gap)
            return Phrase(
                "answer",
                text,
                (answer,),
                now,
                budget=_hurry(gap),
                key=keys[-1],
                last=len(keys) == len(remaining),
                keys=keys,
                gives_way=gives_way,
            )
        infos = [i for i in self.pending if i.kind == "info"]
        if infos and self._fits(infos[0].text, gap):
            return Phrase("info", infos[0].text, (infos[0],), now, budget=_hurry(gap))
        return None

    def give_way(self, now: float) -> bool:
        """Whether the phrase playing is to be cut now: a board reading's phrase said
        beyond the gap (``Phrase.gives_way``) while a move or an important message
        waits, unless it is about to end anyway (``give_way_grace``). The move is
        then said at once, and the phrase again later."""
        playing = self.playing
        if playing is None or not playing.gives_way:
            return False
        if not any(i.kind in ("move", "important") for i in self.pending):
            return False
        ends = playing.composed_at + spoken_seconds(playing.written, self.max_rate)
        return ends - now > self.pacing.give_way_grace

    def _together(
        self, remaining: list[tuple[str, ...]], text: str, gap: float | None
    ) -> tuple[tuple[str, ...], str]:
        """The answer phrases said in one utterance, from ``remaining[0]`` (said as
        ``text``) on: in fast play as many as the gap holds (a board reading's squares
        go on with their fourth form, ", Bella zwei": one square more costs its name
        only, not a phrase and the colour again), at leisure up to ``leisure_chunk``
        of one group. Returns their keys and the text."""
        keys = [remaining[0][0]]
        group = remaining[0][0].rpartition(":")[0]
        for phrase in remaining[1:]:
            if len(phrase) < 4 or not group:
                break
            if gap is None and (
                phrase[0].rpartition(":")[0] != group or len(keys) == self.pacing.leisure_chunk
            ):
                break
            longer = text + phrase[3]
            if not self._fits(longer, gap):
                break
            keys.append(phrase[0])
            text = longer
        return tuple(keys), text

    def _moves(self, urgent: list[Announcement], now: float) -> Phrase:
        """The moves at the head of ``urgent``, up to ``max_combined``, in one phrase."""
        moves: list[Announcement] = []
        for item in urgent:
            if item.kind != "move" or len(moves) == self.pacing.max_combined:
                break
            moves.append(item)
        for answer in self.pending:
            if answer.kind == "answer" and answer.spoken_keys:
                answer.interruptions += 1
                answer.resume_pending = True
        text = self.joiner.join(item.text for item in moves)
        return Phrase("move", text, tuple(moves), now, budget=self._move_budget(moves, now))

    def _part(self, item: Announcement, now: float) -> Phrase | None:
        """The next phrase of an important message said in parts; after a move, its
        fixes are left out (journalled as dropped): the board was put right."""
        index = len(item.spoken_keys)
        while (item.resume_pending and index in item.fix_parts) or (
            item.claim_lost and index in item.claim_parts
        ):
            reason = (
                "the claim is lost (4.7): the claimant has touched a piece"
                if index in item.claim_parts
                else "a move was made since"
            )
            self.outcomes.append(Outcome("dropped", item.kind, item.parts[index], now, reason))
            item.spoken_keys.add(str(index))
            index += 1
        if index == len(item.parts):
            self.pending.remove(item)
            self.outcomes.append(Outcome("heard", item.kind, item.text, now))
            return self._choose(now)
        text = item.parts[index]
        if item.resume_pending and item.resume_text:
            text = f"{item.resume_text} {text}"
        item.resume_pending = False
        last = index == len(item.parts) - 1
        return Phrase(
            item.kind, text, (item,), now, budget=self.budget(2), key=str(index), last=last
        )

    def _move_budget(self, moves: list[Announcement], now: float) -> float | None:
        """A move phrase's budget: its share of the pace, and in fast play no more than
        what is left of ``lag_target`` since the oldest of its moves (a move that
        waited is said quicker, so one late move does not make the next ones late),
        and none at all (``max_rate``) while an answer waits for a gap: the sooner
        the move phrase ends, the longer the gap before the next move."""
        budget = self.budget(len(moves))
        pace = self.pace
        if budget is None or pace is None or pace >= self.pacing.slow_pace:
            return budget
        if any(i.kind in ("answer", "notice") for i in self.pending):
            return 0.0  # an answer waits for a gap: the quicker the moves, the sooner
        left = self.pacing.lag_target - (now - min(item.created for item in moves))
        return min(budget, max(self.pacing.min_budget * len(moves), left))

    def gap(self, now: float) -> float | None:
        """In fast play, the seconds an answer phrase starting now may take: until the
        next move that is said may come (the shortest recent interval between moves,
        times ``gap_share``, for each half-move until it: ``note_move``'s
        ``spoken_in``, counted from the last move), plus ``answer_wait``. None when
        there is no hurry: a slow game (pace ``slow_pace`` or more), no pace yet, no
        move said at all, or a pause in the moves (none for twice the pace and at
        least ``slow_pace``).

        The shortest interval, not the median: a move that comes early waits for the
        rest of the answer phrase, and that is what makes the lag's tail."""
        pace = self.pace
        if pace is None or pace >= self.pacing.slow_pace or not self._move_times:
            return None
        if self._spoken_in is None:
            return None
        since = now - self._move_times[-1]
        if since >= self._pause(pace):
            return None
        due = self.pacing.gap_share * min(self._intervals()) * self._spoken_in
        return due - since + self.pacing.answer_wait

    def _pause(self, pace: float) -> float:
        """No move for this long is a pause: answers are said at leisure again."""
        return max(2 * pace, self.pacing.slow_pace)

    def _fits(self, text: str, gap: float | None) -> bool:
        """Whether an answer phrase said at ``max_rate`` ends before the next move is
        due: in fast play answers take the gaps between moves, and a move never
        waits long behind one."""
        if gap is None:
            return True
        return spoken_seconds(text, self.max_rate) <= gap

    def _catch_up(self) -> float:
        """The lag below which speech counts as caught up with the game."""
        pace = self.pace
        return max(self.pacing.caught_up, pace if pace is not None else 0.0)

    def behind(self, now: float) -> bool:
        """Whether an answer must wait: the last move phrase ended later after its move
        than the pace allows, and moves are still coming. In fast play this leaves
        room between answer phrases for the moves' lag to come down, so answers never
        make it grow from phrase to phrase; in a pause (no move for twice that long)
        answers go on."""
        if self._last_move_lag is None or not self._move_times:
            return False
        limit = self._catch_up()
        return self._last_move_lag > limit and now - self._move_times[-1] < 2 * limit

    def wake_at(self, now: float) -> float | None:
        """When an answer held back (``behind``, or no gap long enough) may be said
        without a new event: once the moves pause. None: nothing is held back."""
        waiting = any(i.kind in ("answer", "info", "notice") for i in self.pending)
        if not waiting or self.playing is not None or not self._move_times:
            return None
        pause = self._pause(self.pace) if self.pace is not None else 0.0
        return self._move_times[-1] + max(2 * self._catch_up(), pause)

    def _drop(self, answer: Announcement, now: float, reason: str) -> None:
        self.pending.remove(answer)
        self.outcomes.append(Outcome("dropped", "answer", answer.text, now, reason))
        if answer.dropped_text:
            index = next(
                (n for n, i in enumerate(self.pending) if i.kind not in ("move", "important")),
                len(self.pending),
            )
            notice = Announcement(self._notice_id, "notice", now, text=answer.dropped_text)
            self._notice_id -= 1
            self.pending.insert(index, notice)

    def _expire(self, now: float) -> None:
        for item in list(self.pending):
            if item.kind not in ("answer", "info") or now - item.created <= self.stale_after:
                continue
            if item.patient:
                continue
            if item.kind == "answer":
                self._drop(item, now, f"waited over {self.stale_after:g} s")
            else:
                self.pending.remove(item)
                self.outcomes.append(Outcome("dropped", "info", item.text, now, "out of date"))

    def done(self, phrase: Phrase, now: float, heard: bool = True, reason: str = "") -> None:
        """The phrase ended: heard in full, or not (the engine failed, or closing)."""
        if self.playing is phrase:
            self.playing = None
        outcome: OutcomeKind = "heard" if heard else ("cut" if reason == "cut" else "failed")
        if phrase.kind == "answer":
            answer = phrase.items[0]
            if phrase.gives_way and not heard and reason == "cut":
                self.outcomes.append(Outcome("cut", "answer", phrase.written, now, GAVE_WAY))
                return  # its squares are said again, whole
            answer.spoken_keys.update(phrase.keys or (phrase.key,))
            if not heard:
                self.outcomes.append(Outcome(outcome, "answer", phrase.written, now, reason))
            elif phrase.last and answer in self.pending:
                self.pending.remove(answer)
                self.outcomes.append(Outcome("heard", "answer", answer.text, now))
            return
        if phrase.key and phrase.kind == "important":  # a part of a message
            item = phrase.items[0]
            item.spoken_keys.add(phrase.key)
            if heard and not phrase.last:
                return
            if item in self.pending:
                self.pending.remove(item)
            written = item.text if heard else phrase.written
            self.outcomes.append(Outcome(outcome, item.kind, written, now, reason))
            return
        for item in phrase.items:
            if item in self.pending:
                self.pending.remove(item)
        if phrase.kind == "move" and phrase.items:
            self._last_move_lag = now - min(item.created for item in phrase.items)
        self.outcomes.append(
            Outcome(outcome, phrase.kind, phrase.written, now, reason, phrase.plies)
        )

    @property
    def idle(self) -> bool:
        return self.playing is None and not self.pending


def _hurry(gap: float | None) -> float | None:
    """An answer's (or notice's) budget: in fast play (a ``gap``) as quick as
    ``max_rate`` allows (budget 0), so that a move that comes early waits as little
    as can be; at leisure, the configured rate."""
    return None if gap is None else 0.0


def _plies(item: Announcement) -> tuple[int, ...]:
    return (item.ply,) if item.ply is not None else ()


def spoken_seconds(text: str, rate: int) -> float:
    """About how long espeak-ng takes to say ``text`` at ``rate`` (a little more
    rather than less: a phrase that fits the estimate ends before a move is due).

    A digit counts as ``CHARS_PER_DIGIT`` characters: numbers are said as words
    ("57": "siebenundfünfzig"), and a clock answer is mostly numbers.
    """
    chars = len(text) + (CHARS_PER_DIGIT - 1) * sum(c.isdigit() for c in text)
    return chars / (CHARS_PER_WORD_MINUTE * rate)


def quicker_rate(seconds: float, budget: float | None, rate: int, max_rate: int) -> int | None:
    """The rate at which a phrase that takes ``seconds`` at ``rate`` fits ``budget``.

    None when it fits already (or no quicker rate is allowed); ``max_rate`` for a
    budget of 0 (as quick as allowed). Rounded up to
    ``RATE_STEP``. espeak-ng's length is
    close to inversely proportional to its rate (measured: 1.32 s at 150 words per
    minute, 0.70 s at 300), with a 5 % margin for the part that is not.
    """
    if budget is None or seconds <= budget or max_rate <= rate:
        return None
    if budget <= 0:  # as quick as allowed
        return max_rate
    wanted = rate * seconds / budget * 1.05
    return int(min(max_rate, max(rate + RATE_STEP, -(-wanted // RATE_STEP) * RATE_STEP)))


#: The reason of a board reading's phrase cut by a move (``give_way``): expected in
#: fast play, not a fault (logged as information, not as a warning).
GAVE_WAY = "gave way: said again"

#: Seconds: two moves closer than this on a board are a burst of events, not a pace.
MIN_INTERVAL = 0.25

#: Characters of written text espeak-ng says per second, per word per minute of
#: rate (measured with the German voice over moves, clock, board and move-number
#: answers: 0.075-0.10 at 150 and at 360; the slow end, so estimates err long).
CHARS_PER_WORD_MINUTE = 0.075

#: A digit of written text, in characters said ("3 Minuten 55": "drei Minuten
#: fünfundfünfzig"; measured: about 7).
CHARS_PER_DIGIT = 7

#: Quicker rates are whole multiples of this (a few rates, so renders can be cached).
RATE_STEP = 10
