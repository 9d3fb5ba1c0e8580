"""The arbiter's console: one page (``/arbiter``) for what an arbiter does
during a round, on a phone.

Every button is one of the documented POSTs (``/control/<action>``, see
``docs/broadcast.md``), sent with the token as ``Authorization: Bearer``: the
console goes through exactly the checks curl does (Origin, token, body schema),
so it can do nothing curl cannot. The token is typed once and kept in the
browser's ``sessionStorage`` (gone when the tab closes), never in a URL, a
cookie or the page; the password field has no ``name``, so even a form sent
without the script would not carry it.

What the console changes, the rules core decides (penalty, takeback, new game,
result, announcements, and the corrections that mend a game: a line of moves
chosen among those offered, moves from a scoresheet, a takeback to any ply, a past
move corrected, the position set, a complete game added; each previewed first,
through the same POST with ``preview: true``, which changes nothing; and a round's
pairings file, uploaded or pasted, naming every board's players at once, previewed
as well: ``daemon/broadcast/pairingcontrol.py``), except what
only the display holds, done here (``DISPLAY_ACTIONS``): rejecting a result the
kings signal on the board, and on a relay (which has no core) the players' names
and round; the daemon's core passes those on as a ``players`` event, which the
journal keeps. "Silence" is a ``say`` the speech part obeys by stopping what it
says. The console follows the game over ``/events`` like the spectators' page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from daemon.broadcast.controls import ControlError
from daemon.broadcast.hub import Hub


def _check(hub: Hub, args: dict[str, Any]) -> dict[str, Any]:
    """The token was right: tell the console the boards it may pick (on a daemon
    of several boards the login names none; the console picks one after)."""
    return {"boards": hub.board_ids()}


def _players(hub: Hub, board_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """New names and round for a relay's board: its page, live PGN and MQTT."""
    if not args:
        raise ControlError("players: give white, black or round", None)
    hub.set_players(
        board_id,
        white=args.get("white") or ("?" if "white" in args else None),
        black=args.get("black") or ("?" if "black" in args else None),
        round=args.get("round") or ("?" if "round" in args else None),
    )
    hub.changed(board_id)
    return {"args": args}


def _reject_signal(hub: Hub, board_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """The kings in the centre are no result: stop offering it (the position
    still has to be restored, as the banner says)."""
    if not hub.boards[board_id].record.reject_signal():
        raise ControlError("reject_signal: no result is signalled on the board", None, 409)
    hub.changed(board_id)
    return {}


#: Controls the display carries out itself when no rules core listens (a relay).
#: Where one does (the daemon), ``FEED_ACTIONS`` go through it instead and come back
#: as feed events, so the journal's PGN on disk and a replay hold them too.
DISPLAY_ACTIONS: dict[str, Callable[[Hub, str, dict[str, Any]], dict[str, Any]]] = {
    "players": _players,
    "reject_signal": _reject_signal,
}
FEED_ACTIONS = frozenset({"players"})


def _show_held_game(hub: Hub, board_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """A relay's "New game": the board's new game that the relay held over its
    finished one (not signed by a daemon's arbiter) is shown from now on."""
    show = getattr(hub, "show_held_game", None)
    if show is None or not show(board_id):
        raise ControlError("new_game: no new game is held for this board (a relay holds a "
                           "board's new game over a finished one until the arbiter says so)",
                           None, 409)  # fmt: skip
    return {}


#: What a relay (no rules core) does itself for an action the daemon's core takes.
RELAY_ACTIONS: dict[str, Callable[[Hub, str, dict[str, Any]], dict[str, Any]]] = {
    "new_game": _show_held_game,
}
#: Controls about the daemon, not a game: they need no ``?board=`` among several.
BOARDLESS_ACTIONS: dict[str, Callable[[Hub, dict[str, Any]], dict[str, Any]]] = {
    "check": _check,
}


async def console_page(request: web.Request) -> web.Response:
    return web.Response(text=CONSOLE, content_type="text/html",
                        headers={"Cache-Control": "no-cache"})  # fmt: skip


def install(app: web.Application) -> None:
    """The console's page; its buttons use the app's ``/control/<action>``."""
    app.router.add_get("/arbiter", console_page)


CONSOLE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>dgt-bridge arbiter</title>
<style>
:root { color-scheme: light; --fg: #000; --bg: #fff; --dim: #555; --alert: #b00020;
  --ok: #0a5d00; }
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg);
  font: 18px/1.35 "DejaVu Sans", "Noto Sans", Arial, sans-serif; }
body { padding: 8px; max-width: 760px; margin: 0 auto; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 14px 0 6px; text-transform: uppercase; letter-spacing: .04em;
  color: var(--dim); }
button, select, input { font: inherit; min-height: 44px; }
button { border: 2px solid var(--fg); background: var(--bg); border-radius: 6px;
  padding: 6px 10px; cursor: pointer; }
button.strong { background: var(--fg); color: var(--bg); }
button:disabled { opacity: .4; }
input, select { border: 2px solid var(--dim); border-radius: 6px; padding: 4px 8px;
  width: 100%; min-width: 0; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 6px; margin-bottom: 6px; }
.row3 { grid-template-columns: 1fr 1fr 1fr; }
.wide { grid-column: 1 / -1; }
.hidden { display: none !important; }
.clock { display: flex; justify-content: space-between; gap: 8px; border: 2px solid var(--fg);
  padding: 4px 8px; margin-bottom: 6px; font-size: 20px; }
.clock .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
.clock .time { font-weight: bold; font-variant-numeric: tabular-nums; white-space: nowrap; }
.clock.running { background: var(--fg); color: var(--bg); }
#banner { background: var(--alert); color: #fff; font-weight: bold; padding: 6px 8px;
  margin-bottom: 6px; }
#signal { border: 3px solid var(--alert); padding: 6px 8px; margin-bottom: 6px; }
#result { font-weight: bold; font-size: 20px; margin-bottom: 6px; }
#feedback { min-height: 1.4em; font-weight: bold; }
#feedback.error { color: var(--alert); }
#feedback.ok { color: var(--ok); }
#penalties { margin: 0; padding-left: 20px; }
#status { color: var(--dim); font-size: 14px; }
textarea { font: inherit; width: 100%; min-height: 88px; border: 2px solid var(--dim);
  border-radius: 6px; padding: 4px 8px; }
#mend-moves { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px; }
#mend-moves button { min-height: 40px; padding: 2px 8px; font-size: 16px; }
#mend-moves button.picked { background: var(--fg); color: var(--bg); }
#lines, #mend-preview, #pairings-preview { border: 3px solid var(--alert); padding: 6px 8px;
  margin-bottom: 6px; }
#pairings-preview { border-color: var(--fg); overflow-wrap: anywhere; }
#pairings-list { margin: 4px 0; padding-left: 0; list-style: none; }
#pairings-list li.missing { color: var(--alert); }
#mend-preview { border-color: var(--fg); overflow-wrap: anywhere; }
#lines button { width: 100%; margin-bottom: 6px; text-align: left; }
details { border-top: 1px solid var(--dim); padding: 6px 0; }
summary { min-height: 44px; line-height: 44px; cursor: pointer; font-weight: bold; }
</style>
</head>
<body>
<div id="status" role="status">arbiter's console</div>
<form id="login" class="hidden" autocomplete="off">
  <h1>Arbiter's console</h1>
  <p>The token is <code>broadcast.token</code> of the daemon's configuration. It is
  kept in this tab only, until you log out or close it.</p>
  <label for="token">Token</label>
  <input id="token" type="password" autocomplete="current-password" required>
  <p><button class="strong" type="submit" id="login-button">Log in</button></p>
  <p id="login-error" class="error" role="alert"></p>
</form>
<main id="console" class="hidden">
  <div class="row"><h1 id="title" class="wide">Board</h1></div>
  <div class="row" id="board-choice"><label class="wide">Board
    <select id="board-select"></select></label></div>
  <div class="clock" data-side="white"><span class="name">White</span>
    <span class="time">–</span></div>
  <div class="clock" data-side="black"><span class="name">Black</span>
    <span class="time">–</span></div>
  <p id="phone-codes" class="hidden"></p>
  <div id="lastmove"></div>
  <div id="result" class="hidden"></div>
  <div id="banner" class="hidden" role="alert"></div>
  <div id="signal" class="hidden">
    <div id="signal-text"></div>
    <div class="row"><button class="strong" id="signal-confirm" data-result="">Confirm</button>
      <button id="signal-reject">Reject</button></div>
  </div>
  <div id="lines" class="hidden" role="alert">
    <p id="lines-text">Several lines of moves lead to the board's position. Which was played?</p>
    <div id="lines-list"></div>
  </div>
  <p id="feedback" role="status"></p>

  <h2>Penalty: time added to the offender's opponent</h2>
  <p id="pen-clock" class="hidden"></p>
  <div class="row">
    <button data-penalty="white" data-seconds="120" data-article="7.4b">
      7.4b: +2:00 to White</button>
    <button data-penalty="black" data-seconds="120" data-article="7.4b">
      7.4b: +2:00 to Black</button>
    <button data-penalty="white" data-seconds="180" data-article="9.5b">
      9.5b: +3:00 to White</button>
    <button data-penalty="black" data-seconds="180" data-article="9.5b">
      9.5b: +3:00 to Black</button>
  </div>
  <div class="row row3">
    <select id="pen-to" aria-label="to"><option value="white">to White</option>
      <option value="black">to Black</option></select>
    <input id="pen-seconds" type="number" min="1" max="3600" value="60" aria-label="seconds">
    <input id="pen-article" value="7.4b" aria-label="article" maxlength="12"
      pattern="(?:[1-9]|1[0-2]|[A-I])(?:\\.\\d{1,2}){0,3}[a-z]?" autocapitalize="off"
      autocomplete="off" spellcheck="false">
  </div>
  <div class="row"><button class="wide" id="pen-custom">Give this time</button></div>
  <ol id="penalties"></ol>

  <h2>Result</h2>
  <div class="row row3">
    <button data-result="1-0">1-0</button><button data-result="1/2-1/2">½-½</button>
    <button data-result="0-1">0-1</button>
  </div>
  <h2>Game</h2>
  <div class="row">
    <button id="takeback">Take back the last move</button>
    <button id="new-game">New game</button>
  </div>

  <h2>Mend the game</h2>
  <div id="mend-preview" class="hidden" role="status">
    <div id="mend-summary"></div>
    <div class="row"><button class="strong" id="mend-apply">Apply</button>
      <button id="mend-cancel">Cancel</button></div>
  </div>
  <p>Tap a move to pick its ply:</p>
  <div id="mend-moves"></div>
  <details id="mend-enter-box" open><summary>Moves from the scoresheet</summary>
    <textarea id="mend-san" aria-label="moves in SAN" autocomplete="off" autocapitalize="off"
      spellcheck="false" placeholder="12. Nf3 Nc6 13. e4"></textarea>
    <div class="row"><button class="wide" id="mend-enter">Check the moves</button></div>
  </details>
  <details><summary>Take back to a ply</summary>
    <div class="row"><input id="mend-back-ply" type="number" min="0" inputmode="numeric"
      aria-label="ply to go back to (0: the start)" placeholder="ply (0: the start)">
      <button id="mend-back">Check the takeback</button></div>
  </details>
  <details><summary>Correct a past move</summary>
    <div class="row"><input id="mend-fix-ply" type="number" min="1" inputmode="numeric"
      aria-label="ply of the move" placeholder="ply">
      <input id="mend-fix-san" aria-label="the right move in SAN" autocomplete="off"
        autocapitalize="off" spellcheck="false" placeholder="right move: Nc3">
      <button class="wide" id="mend-fix">Check the correction</button></div>
  </details>
  <details><summary>Set the position</summary>
    <div class="row"><input class="wide" id="mend-fen" aria-label="FEN" autocomplete="off"
      autocapitalize="off" spellcheck="false" placeholder="FEN">
      <button class="wide" id="mend-set-fen">Set this FEN</button>
      <select id="mend-turn" aria-label="side to move">
        <option value="">to move: as in the game</option>
        <option value="white">White to move</option>
        <option value="black">Black to move</option></select>
      <button id="mend-from-board">Take the board as it stands</button></div>
  </details>
  <details><summary>Add a complete game (PGN)</summary>
    <textarea id="mend-pgn" aria-label="the game's PGN" autocomplete="off" autocapitalize="off"
      spellcheck="false" placeholder='[White "..."] [Black "..."] 1. d4 d5 ... 1-0'></textarea>
    <div class="row"><button class="wide" id="mend-add">Check the game</button></div>
  </details>

  <h2>Players and round</h2>
  <div class="row">
    <input id="white" aria-label="White" placeholder="White" maxlength="100">
    <input id="black" aria-label="Black" placeholder="Black" maxlength="100">
    <input id="round" aria-label="Round" placeholder="Round" maxlength="20">
    <button id="players">Set players and round</button>
  </div>

  <h2>Pairings: every board's players</h2>
  <details id="pairings-box"><summary>Load the round's pairings (TRF or CSV)</summary>
    <p>The file the pairing program exports (FIDE TRF; Swiss-Manager's or Vega's
    pairing list as CSV), or the list pasted below. Board N of the file is board N.</p>
    <label for="pairings-file">File</label>
    <input id="pairings-file" type="file" accept=".trf,.txt,.csv,.tsv,text/plain,text/csv">
    <textarea id="pairings-text" aria-label="the pairings file's text" autocomplete="off"
      autocapitalize="off" spellcheck="false"
      placeholder="or paste it: Bo.;White;Black / 1;Carlsen;Caruana"></textarea>
    <div class="row"><input id="pairings-round" type="number" min="1" inputmode="numeric"
      aria-label="round (empty: the file's)" placeholder="round (empty: the file's)">
      <button id="pairings-check">Check the pairings</button></div>
  </details>
  <div id="pairings-preview" class="hidden" role="status">
    <div id="pairings-summary"></div>
    <ol id="pairings-list"></ol>
    <div class="row"><button class="strong" id="pairings-apply">Name the boards</button>
      <button id="pairings-cancel">Cancel</button></div>
  </div>

  <h2>Announcement</h2>
  <div class="row">
    <button data-say="last">Repeat the last move</button>
    <button data-say="clock">Say the clocks</button>
    <button class="wide" data-say="silence">Silence the announcement</button>
  </div>

  <p><button id="logout">Log out</button></p>
</main>
<script>
"use strict";
const KEY = "dgt-bridge-arbiter-token";
const $ = id => document.getElementById(id);
let token = sessionStorage.getItem(KEY);
// the board the address asks for (/arbiter?board=5); the login itself names none
const asked = new URLSearchParams(location.search).get("board");
let board = null, state = null, receivedAt = 0, source = null, phoneCodes = {};

function fmt(s) {
  if (s === null || s === undefined) return "–";
  s = Math.max(0, s);
  const w = Math.floor(s + 1e-6), h = Math.floor(w / 3600), m = Math.floor((w % 3600) / 60);
  const sec = String(w % 60).padStart(2, "0");
  return h ? h + ":" + String(m).padStart(2, "0") + ":" + sec : m + ":" + sec;
}
function say(text, ok) {
  const el = $("feedback");
  el.textContent = text;
  el.className = ok ? "ok" : "error";
}
async function post(action, body, anyBoard) {
  const url = "/control/" + action +
    (board && !anyBoard ? "?board=" + encodeURIComponent(board) : "");
  let response;
  try {
    response = await fetch(url, {method: "POST", cache: "no-store", headers: {
      "Authorization": "Bearer " + token, "Content-Type": "application/json"},
      body: JSON.stringify(body || {})});
  } catch (e) { say("The daemon cannot be reached: " + e, false); return null; }
  let answer = {};
  try { answer = await response.json(); } catch (e) { answer = {}; }
  if (!response.ok) { say(answer.error || ("refused: HTTP " + response.status), false); }
  if (response.status === 403 && /token/.test(answer.error || "")) { logout(answer.error); }
  return response.ok ? answer : null;
}
async function login(candidate) {
  token = candidate;
  const answer = await post("check", {}, true);
  if (!answer) { logout($("feedback").textContent); return; }
  sessionStorage.setItem(KEY, token);
  $("login").classList.add("hidden");
  $("console").classList.remove("hidden");
  phoneCodes = answer.phones || {};
  const boards = answer.boards || [];
  const select = $("board-select");
  select.innerHTML = "";
  for (const id of boards) { const o = document.createElement("option");
    o.value = id; o.textContent = "Board " + id; select.appendChild(o); }
  $("board-choice").classList.toggle("hidden", boards.length < 2);
  const wanted = board || asked;
  choose(wanted && boards.includes(wanted) ? wanted : boards[0]);
  say(wanted && !boards.includes(wanted) ? "There is no board " + wanted + "; boards: " +
    boards.join(", ") : "", !wanted || boards.includes(wanted));
}
function showLogin(message) {
  $("console").classList.add("hidden");
  $("login").classList.remove("hidden");
  $("login-error").textContent = message || "";
}
function logout(message) {
  sessionStorage.removeItem(KEY);
  token = null;
  if (source) { source.close(); source = null; }
  showLogin(message);
}
function choose(id) {
  board = id;
  $("board-select").value = id;
  const codes = phoneCodes[id];  // read out to a blind player: his phone's page, /l
  $("phone-codes").classList.toggle("hidden", !codes);
  $("phone-codes").textContent = codes ? "Phone page codes (" + location.host + "/l): White " +
    codes.white + ", Black " + codes.black : "";
  state = null;
  const address = new URL(location.href);
  if (address.searchParams.get("board") !== id && (asked || $("board-select").options.length > 1)) {
    address.searchParams.set("board", id);  // a reload, or a bookmark, opens this board
    history.replaceState(null, "", address);
  }
  if (source) source.close();
  source = new EventSource("/events?state=1&board=" + encodeURIComponent(id));
  source.onmessage = e => {
    const msg = JSON.parse(e.data);
    if (msg.kind === "event" && msg.board === board && msg.event &&
        msg.event.type === "notice" && msg.event.code === "bad_request") {
      refusals += 1;  // the rules core's own refusal: it wins over "sent"
      say("Refused: " + msg.event.message, false);
    }
    if (msg.kind === "snapshot" && msg.boards[board]) state = msg.boards[board];
    else if (msg.kind === "event" && msg.board === board && msg.state) state = msg.state;
    else return;
    receivedAt = performance.now();
    render();
  };
  source.onopen = () => { $("status").textContent = "live · board " + board; };
  source.onerror = () => { $("status").textContent = "connection lost, reconnecting…"; };
}
function clockOf(side) {
  if (!state || !state.clock) return null;
  let s = state.clock[side];
  if (state.clock.running === side && !state.result) s -= (performance.now() - receivedAt) / 1000;
  return s;
}
function tick() {
  for (const el of document.querySelectorAll(".clock")) {
    const side = el.dataset.side;
    el.querySelector(".time").textContent = fmt(clockOf(side));
    el.classList.toggle("running", !!(state && state.clock && state.clock.running === side &&
      !state.result));
  }
}
function render() {
  const st = state, h = st.headers;
  $("title").textContent = st.label + (h.round && h.round !== "?" ? " · Round " + h.round : "");
  for (const el of document.querySelectorAll(".clock")) {
    const side = el.dataset.side;
    el.querySelector(".name").textContent = (side === "white" ? "White: " : "Black: ") +
      (h[side] && h[side] !== "?" ? h[side] : "?");
  }
  for (const side of ["white", "black"]) {
    const input = $(side);
    if (document.activeElement !== input) input.value = h[side] && h[side] !== "?" ? h[side] : "";
  }
  if (document.activeElement !== $("round")) $("round").value = h.round !== "?" ? h.round : "";
  // a clock the daemon cannot set (a bus board, a USB clock): the arbiter adds the time
  $("pen-clock").textContent = st.clock_by_hand ?
    "Add the time on the clock by hand: " + st.clock_by_hand + "." : "";
  $("pen-clock").classList.toggle("hidden", !st.clock_by_hand);
  const lm = st.last_move;
  $("lastmove").textContent = lm ? "Last move: " + lm.figurine + " (ply " + lm.ply + ")" :
    "No move yet";
  const result = $("result");
  result.textContent = st.result ? "Result: " + st.result.replace("1/2-1/2", "½-½") +
    (st.result_reason ? " (" + st.result_reason.replace(/_/g, " ") + ")" : "") : "";
  result.classList.toggle("hidden", !st.result);
  const banner = $("banner");
  const irr = st.irregularity;
  banner.textContent = irr ? irr.kind.replace(/_/g, " ") + (irr.article ? " (" + irr.article +
    ")" : "") + (irr.squares && irr.squares.length ? ": " + irr.squares.join(", ") : "") : "";
  banner.classList.toggle("hidden", !irr);
  const signal = st.result_signal;
  $("signal").classList.toggle("hidden", !signal);
  if (signal) {
    $("signal-text").textContent = "The kings signal " + signal.result.replace("1/2-1/2", "½-½") +
      " (" + signal.squares.join(", ") + "). Confirm it as the result?";
    $("signal-confirm").dataset.result = signal.result;
  }
  const list = $("penalties");
  list.innerHTML = "";
  for (const p of st.penalties || []) {
    const li = document.createElement("li");
    const clock = p.clock ? " · clocks then W " + fmt(p.clock.white) + ", B " + fmt(p.clock.black)
      : "";
    li.textContent = (p.article || "?") + ": +" + fmt(p.seconds) + " to " + p.to + clock;
    list.appendChild(li);
  }
  $("takeback").disabled = !st.moves.length;
  renderMend(st);
  tick();
}
// -- mending the game: each correction is previewed (changing nothing), then applied
let pending = null;  // {action, body, done}: what "Apply" sends
let refusals = 0;  // the core's bad_request notices seen (one may overtake the POST's answer)
function renderMend(st) {
  const lines = st.recovery_lines || [];
  $("lines").classList.toggle("hidden", !lines.length);
  const list = $("lines-list");
  if (list.dataset.shown !== JSON.stringify(lines)) {
    list.dataset.shown = JSON.stringify(lines);
    list.innerHTML = "";
    for (const line of lines) {
      const b = document.createElement("button");
      b.textContent = line;
      b.dataset.line = line;
      b.addEventListener("click", () => preview("choose_line", {line: line},
        "Line played: " + line));
      list.appendChild(b);
    }
  }
  const moves = $("mend-moves");
  const key = JSON.stringify(st.moves.map(m => m.ply + m.san));
  if (moves.dataset.shown !== key) {
    moves.dataset.shown = key;
    moves.innerHTML = "";
    for (const m of st.moves) {
      const b = document.createElement("button");
      const number = Math.floor((m.ply + 1) / 2);
      b.textContent = (m.by === "black" ? "…" : number + ".") + m.figurine;
      b.title = "ply " + m.ply;
      b.dataset.ply = m.ply;
      b.addEventListener("click", () => pickPly(m.ply));
      moves.appendChild(b);
    }
  }
}
function pickPly(ply) {
  $("mend-fix-ply").value = ply;
  $("mend-back-ply").value = ply;
  for (const b of $("mend-moves").children) b.classList.toggle("picked", +b.dataset.ply === ply);
}
function hidePreview() { pending = null; $("mend-preview").classList.add("hidden"); }
async function preview(action, body, done) {
  hidePreview();
  const answer = await post(action, Object.assign({preview: true}, body));
  if (!answer) return;  // the refusal, with its reason, is in the feedback line
  const p = answer.preview || {};
  $("mend-summary").textContent = "This " + (p.summary || action) +
    (p.removed ? ". Removed: " + p.removed : "") + ". Nothing is changed until you apply it.";
  pending = {action: action, body: body, done: done};
  $("mend-preview").classList.remove("hidden");
  say("", true);
  $("mend-preview").scrollIntoView({block: "nearest"});
}
function plyOf(id) {
  const text = $(id).value.trim();
  return /^[0-9]+$/.test(text) ? Number(text) : text;  // not a number: the daemon says so
}
async function act(action, body, done) {
  const before = refusals;
  const answer = await post(action, body);
  // a penalty: the clock as the daemon set it, or what to do on it by hand
  if (answer && refusals === before) say(done + (answer.clock ? ". " + answer.clock : ""), true);
}
$("login").addEventListener("submit", e => { e.preventDefault(); login($("token").value);
  $("token").value = ""; });
$("logout").addEventListener("click", () => logout("Logged out."));
$("board-select").addEventListener("change", e => choose(e.target.value));
for (const b of document.querySelectorAll("[data-penalty]")) {
  b.addEventListener("click", () => act("penalty", {to: b.dataset.penalty,
    seconds: Number(b.dataset.seconds), article: b.dataset.article},
    "Penalty sent: +" + fmt(Number(b.dataset.seconds)) + " to " + b.dataset.penalty +
    " (" + b.dataset.article + ")"));
}
$("pen-custom").addEventListener("click", () => {
  const seconds = Number($("pen-seconds").value);
  act("penalty", {to: $("pen-to").value, seconds: seconds,
    article: $("pen-article").value.trim().slice(0, 12)},
    "Penalty sent: +" + fmt(seconds) + " to " + $("pen-to").value);
});
for (const b of document.querySelectorAll("[data-result]")) {
  b.addEventListener("click", () => {
    if (!b.dataset.result) return;
    act("result", {result: b.dataset.result}, "Result sent: " + b.dataset.result);
  });
}
$("signal-reject").addEventListener("click", () => act("reject_signal", {},
  "Signal rejected: restore the position"));
$("takeback").addEventListener("click", () => {
  if (confirm("Take back the last move?")) act("takeback", {}, "Takeback sent");
});
$("new-game").addEventListener("click", () => {
  if (confirm("Start a new game on this board?")) act("new_game", {}, "New game sent");
});
$("players").addEventListener("click", () => act("players", {white: $("white").value.trim(),
  black: $("black").value.trim(), round: $("round").value.trim()}, "Players and round set"));
for (const b of document.querySelectorAll("[data-say]")) {
  b.addEventListener("click", () => act("say", {what: b.dataset.say},
    b.dataset.say === "silence" ? "Silence sent" : "Announcement asked"));
}
$("mend-apply").addEventListener("click", async () => {
  if (!pending) return;
  const sent = pending;
  hidePreview();
  const before = refusals;
  const answer = await post(sent.action, sent.body);
  if (answer && refusals === before) say(sent.done, true);
});
$("mend-cancel").addEventListener("click", () => { hidePreview(); say("Nothing changed", true); });
$("mend-enter").addEventListener("click", () => preview("enter_moves",
  {san: $("mend-san").value}, "Moves played from the scoresheet"));
$("mend-back").addEventListener("click", () => {
  const ply = plyOf("mend-back-ply");
  preview("takeback_to", {ply: ply}, "Taken back to ply " + ply + ": put the board back");
});
$("mend-fix").addEventListener("click", () => {
  const ply = plyOf("mend-fix-ply");
  preview("correct_move", {ply: ply, san: $("mend-fix-san").value.trim()},
    "Ply " + ply + " corrected");
});
$("mend-add").addEventListener("click", () => preview("add_game", {pgn: $("mend-pgn").value},
  "Game added"));
$("mend-from-board").addEventListener("click", () => {
  const turn = $("mend-turn").value;
  if (confirm("Start the game from the position the board shows now?"))
    act("position_from_board", turn ? {turn: turn} : {}, "The board's position is the game's");
});
$("mend-set-fen").addEventListener("click", () => {
  const fen = $("mend-fen").value.trim();
  if (!fen) { say("Type a FEN first", false); return; }
  if (confirm("Start the game from this FEN?")) act("set_position", {fen: fen}, "Position set");
});
// -- the round's pairings: read from a file or pasted, previewed, then applied
let pairings = null;  // the checked body "Name the boards" sends
function pairingsBody() {
  const body = {file: $("pairings-text").value};
  const round = $("pairings-round").value.trim();
  if (round) body.round = /^[0-9]+$/.test(round) ? Number(round) : round;
  return body;
}
function hidePairings() { pairings = null; $("pairings-preview").classList.add("hidden"); }
$("pairings-file").addEventListener("change", async e => {
  const file = e.target.files && e.target.files[0];
  if (!file) return;
  let bytes;
  try { bytes = await file.arrayBuffer(); }
  catch (error) { say("The file cannot be read: " + error, false); return; }
  // as dgt-bridge pairings reads a file: UTF-8, else Windows' Latin-1 (what
  // Swiss-Manager writes on Windows)
  try { $("pairings-text").value = new TextDecoder("utf-8", {fatal: true}).decode(bytes); }
  catch (error) { $("pairings-text").value = new TextDecoder("windows-1252").decode(bytes); }
  $("pairings-check").click();
});
$("pairings-check").addEventListener("click", async () => {
  hidePairings();
  const body = pairingsBody();
  if (!body.file.trim()) { say("Choose the pairings file or paste it first", false); return; }
  const answer = await post("pairings", Object.assign({preview: true}, body), true);
  if (!answer) return;  // the reason (the file's line) is in the feedback line
  const p = answer.preview;
  $("pairings-summary").textContent = "These pairings " + p.summary +
    ". Nothing is changed until you name the boards.";
  const list = $("pairings-list");
  list.innerHTML = "";
  for (const b of p.boards) {
    const li = document.createElement("li");
    li.textContent = "Board " + b.board + ": " + b.white + " – " + b.black;
    list.appendChild(li);
  }
  for (const id of p.missing) {
    const li = document.createElement("li");
    li.className = "missing";
    li.textContent = "Board " + id + ": not a board of this daemon, left out";
    list.appendChild(li);
  }
  for (const name of p.byes) {
    const li = document.createElement("li");
    li.textContent = "No board: " + name;
    list.appendChild(li);
  }
  pairings = body;
  $("pairings-preview").classList.remove("hidden");
  say("", true);
  $("pairings-preview").scrollIntoView({block: "nearest"});
});
$("pairings-apply").addEventListener("click", async () => {
  if (!pairings) return;
  const body = pairings;
  hidePairings();
  const answer = await post("pairings", body, true);
  if (answer) say("Boards named: " + answer.boards.length + ", round " + answer.round, true);
});
$("pairings-cancel").addEventListener("click", () => {
  hidePairings();
  say("Nothing changed", true);
});
setInterval(tick, 250);
if (token) login(token); else showLogin();
</script>
</body>
</html>
"""
