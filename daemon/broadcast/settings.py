"""What the broadcast needs from the configuration (YAML ``broadcast:``).

Plain dataclasses with safe defaults: the configuration loader fills them, the
tests build them directly. Every field says what it changes for a viewer or an
arbiter, because the configuration documentation is generated from the same
words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from drivers.records import Record

Orientation = Literal["white", "black"]


@dataclass(eq=False, repr=False, slots=True)
class BoardSettings(Record):
    """One board of the hall, as the displays name and draw it."""

    id: str = "1"
    """The board's name in URLs and MQTT topics (``/board.svg?board=1``): letters,
    digits, ``-`` and ``_`` only."""
    label: str = ""
    """What the page shows above the board ("Board 1"); empty: "Board <id>"."""
    white: str = "?"
    """White player's name (PGN ``White``)."""
    black: str = "?"
    """Black player's name (PGN ``Black``)."""
    round: str = ""
    """This board's round (PGN ``Round``); empty: the tournament's round."""
    orientation: Orientation | None = None
    """Which side the page draws at the bottom; None: the broadcast's default."""


@dataclass(eq=False, repr=False, slots=True)
class MqttSettings(Record):
    """Publishing the feed to an MQTT broker for a hall of many boards."""

    enabled: bool = False
    """Publish to the broker at all."""
    host: str = "localhost"
    """The broker's host name or address."""
    port: int = 1883
    """The broker's port."""
    username: str | None = None
    """Broker login, when the broker wants one."""
    password: str | None = None
    """Broker password, with ``username``."""
    tls: bool = False
    """Talk to the broker over TLS (its port is then usually 8883); the broker's
    certificate is checked against ``ca_file`` (empty: the system's CAs)."""
    ca_file: str = ""
    """The CA certificate (PEM) that signed the broker's certificate; implies ``tls``."""
    cert_file: str = ""
    """This board's client certificate (PEM), for a broker that wants one; implies ``tls``."""
    key_file: str = ""
    """The private key (PEM) of ``cert_file``."""
    topic_prefix: str = "dgt-bridge"
    """First level of every topic: ``<prefix>/<tournament>/<round>/<board>/events``."""
    tournament: str = "tournament"
    """Second topic level: the tournament's short name (no ``/``, ``+`` or ``#``)."""
    keepalive: int = 30
    """Seconds between MQTT pings; the broker declares the board offline (the
    last will) after 1.5 times this without a word."""
    buffer: int = 10000
    """Events kept until the broker acknowledges them; while the broker is away,
    the oldest beyond this are lost (and counted)."""
    board_key_file: str = ""
    """A file holding this board's key (``dgt-bridge relay --hall-key-file F
    --tournament T --print-board-key N`` prints it): every message is signed with
    it, and a relay given the hall's key takes only this board's signed messages,
    so the board's broker login alone forges nothing. ``{board}`` stands for each
    board's id (one file a board for a daemon of many boards:
    ``/etc/dgt-bridge/board-{board}.key``). Empty: unsigned (a relay without the
    hall's key)."""
    arbiter_key: str | None = None
    """Deprecated (every Pi held it, so one stolen Pi signed any board's results):
    give each board its own key, ``board_key_file``. A secret shared with a relay
    started with ``--arbiter-key-file``: only the events an arbiter's request made
    are signed with it. Ignored when ``board_key_file`` is set."""


@dataclass(eq=False, repr=False, slots=True)
class LichessSettings(Record):
    """Pushing the live PGN to a lichess broadcast round (off by default)."""

    enabled: bool = False
    """Push at all."""
    round_id: str = ""
    """The broadcast round's id: the 8 characters after the round's name in its
    URL (``lichess.org/broadcast/<tour>/<round>/<round_id>``)."""
    token: str | None = None
    """A lichess API token with the ``study:write`` scope, of an account that may
    contribute to the broadcast (lichess.org/account/oauth/token/create)."""
    url: str = "https://lichess.org"
    """Where lichess is (another address only for a test server)."""
    interval: float = 8.0
    """Seconds between two pushes at least (lichess takes one every few seconds)."""
    timeout: float = 20.0
    """Seconds a push may take before it counts as failed (and is retried)."""
    max_backoff: float = 60.0
    """Longest pause between retries after faults, in seconds."""

    def problem(self) -> str | None:
        """Why these settings cannot push, or None."""
        if not re.match(r"^[A-Za-z0-9]{8}$", self.round_id or ""):
            return "lichess.round_id must be the round's 8-character id"
        if not self.token:
            return "lichess.token is needed (a token with the study:write scope)"
        if not self.interval > 0 or not self.timeout > 0 or not self.max_backoff > 0:
            return "lichess.interval, timeout and max_backoff must be positive"
        return None


@dataclass(eq=False, repr=False, slots=True)
class BroadcastSettings(Record):
    """The daemon's own web server and the MQTT publisher."""

    enabled: bool = True
    """Serve the live page and feed at all."""
    address: str = "0.0.0.0"
    """Address the web server listens on. ``0.0.0.0`` (the default) serves the page
    to the whole local network, which is its job (the hall's displays, phones);
    ``127.0.0.1``: this machine only. Every address listened on is printed."""
    port: int = 8080
    """TCP port of the web server; 0 picks a free one (tests)."""
    token: str | None = None
    """The arbiter's secret for the POST controls (new game, set position,
    result...). None or empty: the controls are disabled (403)."""
    event: str = "?"
    """Tournament name (PGN ``Event``)."""
    site: str = "?"
    """Where it is played (PGN ``Site``)."""
    date: str = ""
    """PGN ``Date`` (``YYYY.MM.DD``); empty: the day the daemon started."""
    round: str = "?"
    """The round being played (PGN ``Round``; MQTT topic level)."""
    orientation: Orientation = "white"
    """Which side the page draws at the bottom by default."""
    boards: list[BoardSettings] = field(default_factory=lambda: [BoardSettings()])
    """One entry per board this daemon reads; the page shows a grid when several."""
    wall: Literal["", "fit", "cycle"] = ""
    """The hall page (``/`` with several boards) on a wall screen: ``fit`` sizes every
    board so that all fit on the screen at once, ``cycle`` shows pages of boards in
    turn; empty: the scrolling grid. ``/?wall=fit`` or ``/?wall=cycle`` chooses it
    for one screen, whatever is set here."""
    wall_boards_per_page: int = 0
    """With ``wall: cycle``: boards on one page; 0: as many as fit with each board at
    least a quarter of the screen's height."""
    wall_page_seconds: float = 20.0
    """With ``wall: cycle``: seconds each page of boards is shown."""
    client_queue: int = 256
    """Messages waiting for one viewer; a viewer that falls further behind is
    dropped (it reconnects and resumes), so it never slows the others."""
    write_timeout: float = 10.0
    """Seconds one write to a viewer may take before the viewer is dropped."""
    history: int = 5000
    """Feed events kept for viewers resuming with ``Last-Event-ID``."""
    keepalive: float = 15.0
    """Seconds between keep-alive comments on an idle SSE stream."""
    max_body: int = 16384
    """Largest accepted POST body in bytes (413 beyond)."""
    body_timeout: float = 10.0
    """Seconds a POST body may take to arrive (408 beyond): a client dripping its
    body cannot hold a connection open."""
    max_connections: int = 1000
    """Connections served at once, viewers included; lowered at start to what the
    process's file limit allows (``ulimit -n``; the unit's ``LimitNOFILE``), keeping
    64 for the journal, the board and speech. A connection beyond is refused at
    once (503), or, from a newcomer, takes the place of an idle one of the address
    holding the most."""
    max_connections_per_address: int = 64
    """Connections from one client address at once (a browser uses up to 6). Behind
    a reverse proxy or a NAT every viewer is one address: raise it there."""
    max_viewers_per_address: int = 16
    """Live feeds (``/events``, ``/ws``: one per open page) from one client address at
    once, at most ``max_connections_per_address``; the next is refused (503). Kept
    lower than the connections, so a few machines cannot fill the server with
    viewers that are never idle (behind a NAT or proxy, raise it with the other)."""
    header_timeout: float = 10.0
    """Seconds a client may take to send a request's headers (and the TLS
    handshake); the connection is closed beyond."""
    idle_timeout: float = 30.0
    """Seconds an idle keep-alive connection stays open between requests."""
    tls_certificate: str = ""
    """PEM file of the server's TLS certificate (with its chain): the page is then
    served as https:// (and the feed as wss://). Empty: plain HTTP."""
    tls_key: str = ""
    """PEM file of the certificate's private key (with ``tls_certificate``)."""
    hosts: list[str] = field(default_factory=list)
    """Host names the page is reached by (``pi.local``, ``192.168.1.20``). Empty: a
    browser's state-changing request or WebSocket must come from a page of the host
    it is sent to (``Origin`` equal to ``Host``). Set: the ``Host`` and ``Origin``
    must be one of these (also refuses a rebound DNS name)."""
    mqtt: MqttSettings = field(default_factory=MqttSettings)
    """Publishing to an MQTT broker (off by default)."""
    lichess: LichessSettings = field(default_factory=LichessSettings)
    """Pushing the live PGN to a lichess broadcast round (off by default)."""

    def __post_init__(self) -> None:
        for name in ("body_timeout", "header_timeout", "idle_timeout"):
            value = getattr(self, name)
            if not 0 < value <= 3600:
                raise ValueError(f"broadcast.{name} must be between 0 and 3600 seconds: {value}")
        for name in ("max_connections", "max_connections_per_address", "max_viewers_per_address"):
            if getattr(self, name) < 1:
                raise ValueError(f"broadcast.{name} must be at least 1: {getattr(self, name)}")
        if self.wall_boards_per_page < 0:
            raise ValueError(
                f"broadcast.wall_boards_per_page must be 0 or more: {self.wall_boards_per_page}"
            )
        if not 1 <= self.wall_page_seconds <= 3600:
            raise ValueError(
                f"broadcast.wall_page_seconds must be between 1 and 3600: {self.wall_page_seconds}"
            )
        if bool(self.tls_certificate) != bool(self.tls_key):
            raise ValueError("broadcast.tls_certificate and broadcast.tls_key go together")

    def board(self, board_id: str) -> BoardSettings | None:
        for board in self.boards:
            if board.id == board_id:
                return board
        return None
