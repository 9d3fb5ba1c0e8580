"""The live page: one self-contained HTML document, no CDN, no build step.

The Pi may stand in a hall without internet, so everything the page needs is
here or on the daemon (``/board.svg``, ``/events``). The page subscribes to
``/events?state=1``: each message carries the board's whole display state, so
the page never folds events itself and cannot drift from the server's record.
The SVG is fetched from the server (python-chess draws it) and swapped only once
loaded, so the board never flickers. Clocks count down in the browser between
clock reports. ``EventSource`` reconnects by itself; a watchdog reopens it
should the browser give up (the daemon was down longer than a retry).

Readable across a room: large type, black on white, a red banner for an
irregularity until the position is restored.
"""

from __future__ import annotations

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dgt-bridge live</title>
<style>
:root { color-scheme: light; --fg: #000; --bg: #fff; --dim: #444; --alert: #b00020; }
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg);
  font-family: "DejaVu Sans", "Noto Sans", Arial, sans-serif; }
body { padding: 1vmin; }
#status-line { font-size: 2.2vmin; color: var(--dim); min-height: 2.6vmin; }
#status-line.offline { color: var(--alert); font-weight: bold; }
.single { display: flex; gap: 2vmin; align-items: flex-start; justify-content: center; }
.single .boardbox { height: 88vh; width: 88vh; max-width: 60vw; max-height: 60vw; flex: none; }
.boardbox img { width: 100%; height: 100%; display: block; }
.panel { flex: 1 1 auto; min-width: 0; max-width: 38vw; display: flex; flex-direction: column;
  gap: 1.2vmin; height: 88vh; }
.title { font-size: 3.4vmin; font-weight: bold; }
.player { display: flex; justify-content: space-between; align-items: baseline; gap: 2vmin;
  font-size: 4.2vmin; border: 0.4vmin solid var(--fg); padding: 0.6vmin 1.2vmin; }
.player .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.player .clock { font-variant-numeric: tabular-nums; font-weight: bold; font-size: 5.6vmin; }
.player.running { background: var(--fg); color: var(--bg); }
.player.low .clock { text-decoration: underline; }
.banner { display: none; background: var(--alert); color: #fff; font-weight: bold;
  font-size: 3.6vmin; padding: 1vmin 1.4vmin; }
.banner.shown { display: block; }
.result { display: none; font-size: 4.4vmin; font-weight: bold; text-align: center;
  border: 0.5vmin double var(--fg); padding: 0.6vmin; }
.result.shown { display: block; }
.moves { flex: 1 1 auto; overflow-y: auto; font-size: 3.6vmin; line-height: 1.35;
  column-gap: 2vmin; }
.moves .row { display: grid; grid-template-columns: 4ch 1fr 1fr; }
.moves .no { color: var(--dim); }
.moves .last { background: #ffe066; font-weight: bold; }
.grid { display: grid; gap: 1.5vmin;
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 30vmax), 1fr)); }
.card { border: 0.3vmin solid var(--fg); padding: 0.8vmin; display: flex;
  flex-direction: column; gap: 0.6vmin; color: inherit; text-decoration: none; }
.card .title { font-size: 2.4vmin; }
.card .player { font-size: 2.4vmin; }
.card .player .clock { font-size: 2.8vmin; }
.card .banner { font-size: 2.2vmin; }
.card .result { font-size: 2.4vmin; }
.card .lastmove { font-size: 2.4vmin; min-height: 3vmin; }
@media (orientation: portrait) {
  .single { flex-direction: column; align-items: stretch; }
  .single .boardbox { width: 100%; height: auto; max-width: none; max-height: none;
    aspect-ratio: 1 / 1; }
  .panel { max-width: none; height: auto; }
  .player { font-size: 5.5vw; } .player .clock { font-size: 7vw; }
  .banner { font-size: 5vw; } .result { font-size: 5.5vw; }
  .moves { font-size: 5vw; max-height: none; }
  .title { font-size: 5vw; }
  .card .title, .card .player, .card .lastmove { font-size: 4.5vw; }
  .card .player .clock { font-size: 5vw; }
}
</style>
</head>
<body>
<div id="status-line" role="status">connecting…</div>
<main id="app" aria-live="polite"></main>
<script>
"use strict";
const params = new URLSearchParams(location.search);
const chosen = params.get("board");
const states = {};
let receivedAt = {};
let boardOrder = [];
let source = null;
let lastMessage = Date.now();

function esc(text) {
  return String(text).replace(/[&<>"']/g,
    c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}
function fmtClock(s) {
  s = Math.max(0, s);
  const whole = Math.floor(s + 1e-6);
  const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), sec = whole % 60;
  const mm = String(m).padStart(2, "0"), ss = String(sec).padStart(2, "0");
  if (s < 10) return (h ? h + ":" + mm + ":" : m + ":") + ss + "." + Math.floor((s % 1) * 10);
  return h ? h + ":" + mm + ":" + ss : m + ":" + ss;
}
function clockNow(st, side) {
  if (!st.clock) return null;
  let s = st.clock[side];
  if (st.clock.running === side && !st.result && receivedAt[st.board]) {
    s -= (performance.now() - receivedAt[st.board]) / 1000;
  }
  return s;
}
const KINDS = {
  illegal_move: "Illegal move", touch_move: "Touch move", castling_rook_first:
  "Castling with the rook first", incomplete_castling: "Incomplete castling",
  incomplete_promotion: "Incomplete promotion", clock_without_move:
  "Clock pressed without a move", displaced_pieces: "Displaced pieces",
  wrong_setup: "Wrong set-up"
};
function pieceName(p) {
  return p ? ({K: "K", Q: "Q", R: "R", B: "B", N: "N", P: "pawn"}[p.toUpperCase()] || p) +
    (p === p.toUpperCase() ? " (white)" : " (black)") : "empty";
}
function irregularityText(irr) {
  let text = (KINDS[irr.kind] || irr.kind) + (irr.article ? " (" + irr.article + ")" : "");
  if (irr.by) text += ": " + irr.by;
  if (irr.restore && irr.restore.length) {
    text += " — restore " + irr.restore.slice(0, 8).map(
      r => r.square + " " + pieceName(r.piece)).join(", ");
  } else if (irr.squares && irr.squares.length) {
    text += " — " + irr.squares.join(", ");
  }
  if (irr.consequence) text += ". " + irr.consequence;
  return text;
}
function resultText(st) {
  if (!st.result) return "";
  return st.result.replace("1/2", "½").replace("1/2", "½") +
    (st.result_reason ? " (" + st.result_reason.replace(/_/g, " ") + ")" : "");
}
function noteText(st) {
  if (st.flag) return st.flag.both ? "Both flags have fallen" :
    "Flag fallen: " + (st.flag.side || "?");
  if (st.draw_claimable) return "Draw may be claimed (" +
    String(st.draw_claimable.reason).replace(/_/g, " ") + ")";
  return "";
}
function sides(st) {
  return st.orientation === "black" ? ["white", "black"] : ["black", "white"];
}
function playerHtml(st, side) {
  const name = st.headers[side] && st.headers[side] !== "?" ? st.headers[side] :
    (side === "white" ? "White" : "Black");
  return '<div class="player" data-side="' + side + '"><span class="name">' + esc(name) +
    '</span><span class="clock">–</span></div>';
}
function svgUrl(st, size) {
  return "/board.svg?board=" + encodeURIComponent(st.board) + "&seq=" + st.seq +
    (size ? "&size=" + size : "");
}
function layout() {
  const app = document.getElementById("app");
  const ids = chosen ? [chosen] : boardOrder;
  if (ids.length === 1) {
    const st = states[ids[0]];
    if (!st) { app.innerHTML = "<p class='title'>No board " + esc(ids[0]) + "</p>"; return; }
    const [top, bottom] = sides(st);
    app.className = "single";
    app.innerHTML = '<div class="boardbox"><img id="board" alt="board" data-fen=""></div>' +
      '<div class="panel" data-board="' + esc(st.board) + '"><div class="title"></div>' +
      playerHtml(st, top) + '<div class="banner" role="alert"></div>' +
      '<div class="result"></div><div class="moves" id="moves"></div>' +
      playerHtml(st, bottom) + "</div>";
  } else {
    app.className = "grid";
    app.innerHTML = ids.map(id => {
      const st = states[id];
      const [top, bottom] = sides(st);
      return '<a class="card" href="?board=' + encodeURIComponent(id) + '" data-board="' +
        esc(id) + '"><div class="title"></div>' + playerHtml(st, top) +
        '<img alt="board ' + esc(id) + '" data-fen="">' + playerHtml(st, bottom) +
        '<div class="banner" role="alert"></div><div class="result"></div>' +
        '<div class="lastmove"></div></a>';
    }).join("");
  }
  app.dataset.layout = ids.join(",");
  for (const id of ids) render(id);
}
function swapBoard(img, st, size) {
  const marked = st.irregularity ? (st.irregularity.squares || []).join(",") : "";
  const key = st.fen + "|" + st.orientation + "|" + (st.last_move ? st.last_move.uci : "") +
    "|" + marked;
  if (img.dataset.key === key) return;
  img.dataset.key = key;
  const next = new Image();
  next.onload = () => { if (img.dataset.key === key) { img.src = next.src;
    img.dataset.fen = st.fen; img.dataset.ply = st.ply; } };
  next.src = svgUrl(st, size);
}
function movesHtml(st) {
  let html = "";
  const moves = st.moves;
  if (!moves.length) return "";
  let i = 0;
  while (i < moves.length) {
    const m = moves[i];
    const no = moveNumber(st, m.ply);
    let white = "", black = "";
    if (m.by === "white") { white = m; if (moves[i + 1] && moves[i + 1].by === "black") {
      black = moves[i + 1]; i += 1; } }
    else { black = m; }
    i += 1;
    const cell = mv => mv ? '<span class="mv' + (mv.ply === st.ply ? " last" : "") +
      '" data-ply="' + mv.ply + '">' + esc(mv.figurine) + "</span>" : "<span>…</span>";
    html += '<div class="row"><span class="no">' + no + '.</span>' + cell(white) +
      cell(black) + "</div>";
  }
  return html;
}
function moveNumber(st, ply) {
  const parts = (st.start_fen || "").split(" ");
  const full = parseInt(parts[5] || "1", 10) || 1;
  return full + Math.floor((ply - 1 + (parts[1] === "b" ? 1 : 0)) / 2);
}
function render(id) {
  const st = states[id];
  const root = document.querySelector('[data-board="' + CSS.escape(id) + '"]');
  if (!st || !root) return;
  const single = root.classList.contains("panel");
  const round = st.headers.round && st.headers.round !== "?" ? " · Round " + st.headers.round
    : "";
  root.querySelector(".title").textContent = st.label + round;
  const banner = root.querySelector(".banner");
  let alertText = st.irregularity ? irregularityText(st.irregularity) : "";
  if (!alertText && st.status && st.status.connected === false) alertText = "Board not connected";
  banner.textContent = alertText;
  banner.classList.toggle("shown", !!alertText);
  const result = root.querySelector(".result");
  result.textContent = resultText(st) || noteText(st);
  result.classList.toggle("shown", !!result.textContent);
  const img = single ? document.getElementById("board") : root.querySelector("img");
  swapBoard(img, st, single ? 0 : 360);
  if (single) {
    const moves = document.getElementById("moves");
    moves.innerHTML = movesHtml(st);
    const last = moves.querySelector(".last");
    if (last) last.scrollIntoView({block: "nearest"});
  } else {
    const lm = st.last_move;
    root.querySelector(".lastmove").textContent = lm ?
      moveNumber(st, lm.ply) + (lm.by === "white" ? ". " : "… ") + lm.figurine : "";
  }
  tickBoard(id);
}
function tickBoard(id) {
  const st = states[id];
  const root = document.querySelector('[data-board="' + CSS.escape(id) + '"]');
  if (!st || !root) return;
  for (const el of root.querySelectorAll(".player")) {
    const side = el.dataset.side;
    const s = clockNow(st, side);
    el.querySelector(".clock").textContent = s === null ? "–" : fmtClock(s);
    el.classList.toggle("running", !!(st.clock && st.clock.running === side && !st.result));
    el.classList.toggle("low", s !== null && s < 60);
  }
}
function statusLine(text, offline) {
  const el = document.getElementById("status-line");
  el.textContent = text;
  el.classList.toggle("offline", !!offline);
}
function batteryText() {
  const ids = chosen ? [chosen] : boardOrder;
  const parts = [];
  for (const id of ids) {
    const st = states[id];
    if (st && st.status && st.status.battery !== null && st.status.battery !== undefined) {
      parts.push((ids.length > 1 ? st.label + " " : "") + "battery " +
        Math.round(st.status.battery) + "%");
    }
  }
  return parts.join(" · ");
}
function onMessage(e) {
  lastMessage = Date.now();
  const msg = JSON.parse(e.data);
  if (msg.kind === "snapshot") {
    const order = Object.keys(msg.boards);
    for (const id of order) { states[id] = msg.boards[id]; receivedAt[id] = performance.now(); }
    boardOrder = order;
    layout();
  } else if (msg.kind === "event" && msg.state) {
    const isNew = !(msg.board in states);
    states[msg.board] = msg.state;
    receivedAt[msg.board] = performance.now();
    if (isNew) { boardOrder.push(msg.board); layout(); } else { render(msg.board); }
  } else if (msg.kind === "status" && states[msg.board]) {
    states[msg.board].status = msg.status;
    render(msg.board);
  }
  statusLine("live " + batteryText(), false);
}
function connect() {
  if (source) source.close();
  const q = "state=1" + (chosen ? "&board=" + encodeURIComponent(chosen) : "");
  source = new EventSource("/events?" + q);
  source.onmessage = onMessage;
  source.addEventListener("ping", () => { lastMessage = Date.now(); });
  source.onopen = () => statusLine("live", false);
  source.onerror = () => {
    statusLine("connection lost — reconnecting…", true);
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
  };
}
setInterval(() => { for (const id of Object.keys(states)) tickBoard(id); }, 100);
setInterval(() => {  // keep-alive comments arrive every few seconds; silence: reopen
  if (Date.now() - lastMessage > 40000) { lastMessage = Date.now(); connect(); }
}, 5000);
connect();
</script>
</body>
</html>
"""
