"""The live page: one self-contained HTML document, no CDN, no build step.

The Pi may stand in a hall without internet, so everything the page needs is
here or on the daemon (``/events``). The page subscribes to
``/events?state=1``: each message carries the board's whole display state, so
the page never folds events itself and cannot drift from the server's record.
The first response already holds the board (SVG), names, clocks and moves,
drawn here in the script's own markup (``render_page``), so the page is never
empty, even before the event stream connects; a grid's cards name their
positions and the script draws them as it starts. Every later picture is drawn
by the script from the state (``drawBoard``: python-chess's own parts, put
together as python-chess does, ``daemon/broadcast/boardpicture.py``), so a move
costs the daemon nothing per viewer but its message, and swapped only once
loaded, so the board never flickers. Clocks count down in the browser between
clock reports. ``EventSource`` reconnects by itself; a watchdog reopens it
should the browser give up (the daemon was down longer than a retry).

Readable across a room: large type, black on white, a red banner for an
irregularity until the position is restored. One board never makes the page
scroll: on a wall screen (landscape) the board is on the left, the players and
moves on the right; on a phone (portrait) a clock above and below the board and
the move list below, scrolling inside its own box. Board and both clocks are
always in view.
"""

from __future__ import annotations

import base64
import html
import math
from typing import TYPE_CHECKING, Any

from daemon.broadcast.boardpicture import Picture, board_kit, picture

if TYPE_CHECKING:
    from daemon.broadcast.hub import Hub

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dgt-bridge live</title>
<link rel="icon" href="data:,">
<style>
:root { color-scheme: light; --fg: #000; --bg: #fff; --dim: #444; --alert: #b00020;
  --pad: 1vmin; --status: max(18px, 2.6vmin); --vh: 1vh; }
@supports (height: 1dvh) { :root { --vh: 1dvh; } }  /* a phone's browser bars come and go */
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg);
  font-family: "DejaVu Sans", "Noto Sans", Arial, sans-serif; }
body { padding: 0 var(--pad) var(--pad); }
#status-line { height: var(--status); line-height: var(--status);
  font-size: calc(var(--status) * 0.72); color: var(--dim); white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
#status-line.offline { color: var(--alert); font-weight: bold; }
/* One board: the page never scrolls; board and both clocks always in view, the
   move list scrolls inside its own box. Wall screen / landscape: board left. */
.single { display: grid; overflow: hidden; column-gap: 2vmin;
  height: calc(100 * var(--vh) - var(--status) - var(--pad));
  --board: min(calc(100 * var(--vh) - var(--status) - var(--pad)), 62vw);
  grid-template-columns: var(--board) minmax(0, 1fr);
  grid-template-rows: auto auto auto auto minmax(0, 1fr) auto;
  grid-template-areas: "board title" "board top" "board banner" "board result"
    "board moves" "board bottom"; }
.single > * { min-width: 0; }
.single .title { grid-area: title; }
.single .top { grid-area: top; }
.single .bottom { grid-area: bottom; }
.single .banner { grid-area: banner; }
.single .result { grid-area: result; }
.single .moves { grid-area: moves; }
.single .boardbox { grid-area: board; width: var(--board); height: var(--board); }
.boardbox img { width: 100%; height: 100%; display: block; }
.title { font-size: 3.4vmin; font-weight: bold; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; margin-bottom: 0.8vmin; }
.player { display: flex; justify-content: space-between; align-items: baseline; gap: 2vmin;
  font-size: 4.2vmin; border: 0.4vmin solid var(--fg); padding: 0.6vmin 1.2vmin;
  margin-bottom: 0.8vmin; }
.player .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
.player .clock { font-variant-numeric: tabular-nums; font-weight: bold; font-size: 5.6vmin;
  white-space: nowrap; }
.player.running { background: var(--fg); color: var(--bg); }
.player.low .clock { text-decoration: underline; }
.banner { display: none; background: var(--alert); color: #fff; font-weight: bold;
  font-size: 3.6vmin; padding: 1vmin 1.4vmin; margin-bottom: 0.8vmin; }
.banner.shown { display: block; }
.result { display: none; font-size: 4.4vmin; font-weight: bold; text-align: center;
  border: 0.5vmin double var(--fg); padding: 0.6vmin; margin-bottom: 0.8vmin; }
.result.shown { display: block; }
.moves { position: relative; min-height: 0; overflow-y: auto; overscroll-behavior: contain;
  font-size: 3.6vmin; line-height: 1.35; margin-bottom: 0.8vmin; }
.moves .row { display: grid; grid-template-columns: 4ch 1fr 1fr; }
.moves .no { color: var(--dim); }
.moves .last { background: #ffe066; font-weight: bold; }
.grid { display: grid; gap: 1.5vmin;
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 30vmax), 1fr)); }
.card { border: 0.3vmin solid var(--fg); padding: 0.8vmin; display: flex;
  flex-direction: column; gap: 0.6vmin; color: inherit; text-decoration: none; }
.card img { width: 100%; aspect-ratio: 1 / 1; display: block; }
.card .title { font-size: 2.4vmin; margin: 0; }
.card .player { font-size: 2.4vmin; margin: 0; }
.card .player .clock { font-size: 2.8vmin; }
.card .banner { font-size: 2.2vmin; margin: 0; }
.card .result { font-size: 2.4vmin; margin: 0; }
.card .lastmove { font-size: 2.4vmin; min-height: 3vmin; }
/* A wall screen (/?wall=fit or cycle): every card sized by the script (fitWall) so
   that the boards of the page fill the screen without scrolling; each card's
   title, names, clocks and last move one line each, the banner over the board. */
.grid.wall { grid-template-columns: repeat(var(--cols), var(--cw)); grid-auto-rows: var(--ch);
  gap: var(--gap); justify-content: center; align-content: space-evenly; overflow: hidden;
  height: calc(100 * var(--vh) - var(--status) - var(--pad)); }
.wall .card { position: relative; padding: var(--cp); gap: var(--cg); overflow: hidden;
  border-width: var(--bw); }
.wall .card img { width: var(--b); height: var(--b); align-self: center; flex: none; }
.wall .card .title, .wall .card .lastmove { font-size: var(--f); height: var(--line);
  line-height: var(--line); min-height: 0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; flex: none; }
.wall .card .player { font-size: var(--f); height: var(--line);
  line-height: calc(var(--line) - 2 * var(--bw)); padding: 0 calc(0.3 * var(--f));
  border-width: var(--bw); gap: calc(0.4 * var(--f)); flex: none; }
.wall .card .player .clock { font-size: var(--f); min-width: 4.1em; text-align: right; }
/* the clock's room is kept whatever it shows, so a name is fitted once (shrinkNames) */
.wall .card .banner.shown, .wall .card .result.shown { position: absolute; left: var(--cp);
  right: var(--cp); top: calc(var(--cp) + 2 * var(--line) + 2 * var(--cg)); max-height: var(--b);
  overflow: hidden; font-size: var(--f); line-height: 1.2; opacity: 0.92; }
/* A phone or a tablet upright: clocks above and below the board, the move list
   below them takes what is left (at least 18% of the height). */
@media (orientation: portrait) {
  :root { --u: min(1vw, 0.6 * var(--vh)); --status: max(18px, calc(4 * var(--u))); }
  .single { --board: min(calc(100vw - 2 * var(--pad)),
      calc(82 * var(--vh) - var(--status) - 40 * var(--u)));
    grid-template-columns: minmax(0, 1fr);
    grid-template-rows: auto auto auto auto auto auto minmax(0, 1fr);
    grid-template-areas: "title" "top" "board" "bottom" "banner" "result" "moves"; }
  .single .boardbox { justify-self: center; margin-bottom: 0.8vmin; }
  .title { font-size: calc(5 * var(--u)); }
  .player { font-size: calc(5.5 * var(--u)); padding: calc(0.6 * var(--u)) calc(1.2 * var(--u)); }
  .player .clock { font-size: calc(7 * var(--u)); }
  .banner { font-size: calc(5 * var(--u)); } .result { font-size: calc(5.5 * var(--u)); }
  .moves { font-size: calc(5 * var(--u)); }
  .card .title, .card .player, .card .lastmove { font-size: 4.5vw; }
  .card .player .clock { font-size: 5vw; }
}
</style>
</head>
<body>
<div id="status-line" role="status">connecting…</div>
<!--APP-->
<script>
"use strict";
const params = new URLSearchParams(location.search);
const chosen = params.get("board");
// The wall screen: the URL's ?wall= (and &per=, &every=) before the configuration's.
const WALL = (() => {
  const conf = document.body.dataset;
  let mode = params.has("wall") ? (params.get("wall") || "fit") : (conf.wall || "");
  if (mode === "1" || mode === "true") mode = "fit";
  const num = (name, key, fallback) => {
    const value = parseFloat(params.get(name) || conf[key] || "");
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {mode: mode === "fit" || mode === "cycle" ? mode : "",
          per: Math.floor(num("per", "wallPer", 0)),
          every: Math.max(1, num("every", "wallEvery", 20))};
})();
let wallPage = 0;
const states = {};
let sourceProblem = null;  // the feed's own source out of reach (a relay's broker)
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
  wrong_setup: "Wrong set-up", boards_diverged: "The two boards disagree",
  promotion_changed: "Promotion piece changed after it was set (4.4d)"
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
  const penalty = (st.penalties || []).slice(-1)[0];
  if (penalty) return "Penalty" + (penalty.article ? " " + penalty.article : "") + ": +" +
    fmtClock(penalty.seconds) + " to " + (penalty.to === "black" ? "Black" : "White");
  return "";
}
function sides(st) {
  return st.orientation === "black" ? ["white", "black"] : ["black", "white"];
}
function playerName(st, side) {
  return st.headers[side] && st.headers[side] !== "?" ? st.headers[side] :
    (side === "white" ? "White" : "Black");
}
function playerHtml(st, side, where) {
  return '<div class="player ' + where + '" data-side="' + side + '"><span class="name">' +
    esc(playerName(st, side)) + '</span><span class="clock">–</span></div>';
}
// -- the board's picture, drawn here from the state (daemon/broadcast/boardpicture.py):
// python-chess's own parts (BOARD_KIT) put together as python-chess does, so that
// no move costs the daemon a request per viewer ------------------------------------
const BOARD_KIT = /*BOARD_KIT*/null;
const FILES = "abcdefgh";
function drawBoard(st, size) {
  const kit = BOARD_KIT;
  const turned = kit.boards[st.orientation] || Object.values(kit.boards)[0];
  const at = {}, lines = [];
  st.fen.split(" ")[0].split("/").forEach((row, i) => {
    const line = [];
    let file = 0;
    for (const c of row) {
      if (c >= "1" && c <= "8") { for (let n = 0; n < +c; n++) line.push("."); file += +c; }
      else { at[FILES[file] + (8 - i)] = c; line.push(c); file += 1; }
    }
    lines.push(line.join(" "));
  });
  const uci = st.last_move ? st.last_move.uci : "";
  const last = /^[a-h][1-8][a-h][1-8]/.test(uci) ? [uci.slice(0, 2), uci.slice(2, 4)] : [];
  const marked = new Set((st.irregularity && st.irregularity.squares) || []);
  const shown = new Set(Object.values(at));
  let defs = "";
  for (const [symbol, piece] of Object.entries(kit.pieces)) {
    if (shown.has(symbol)) defs += piece.def;
  }
  if (st.check) defs += kit.gradient;
  const rect = (x, y) => '<rect x="' + x + '" y="' + y + '" width="' + kit.square +
    '" height="' + kit.square + '"';
  let squares = "", pieces = "";
  for (let rank = 1; rank <= 8; rank++) {
    for (const file of FILES) {
      const name = file + rank;
      const [x, y, tone] = turned.squares[name];
      const lit = last.includes(name) ? " lastmove" : "";
      squares += rect(x, y) + ' class="square ' + tone + lit + " " + name + '" stroke="none" ' +
        kit.tones[tone + lit] + " />";
      if (marked.has(name)) squares += rect(x, y) + ' stroke="none" ' + kit.fill + " />";
      if (at[name]) {
        const id = "#" + kit.pieces[at[name]].id;
        pieces += '<use href="' + id + '" xlink:href="' + id + '" transform="translate(' + x +
          ", " + y + ')" />';
      }
    }
  }
  if (st.check && turned.squares[st.check]) {
    const [x, y] = turned.squares[st.check];
    squares += rect(x, y) + ' class="check" fill="url(#check_gradient)" />';
  }
  return kit.head + (size ? ' width="' + size + '" height="' + size + '"' : "") +
    "><desc><pre>" + lines.join("\\n") + "</pre></desc>" +
    (defs ? "<defs>" + defs + "</defs>" : "<defs />") + turned.frame + squares + pieces + "</svg>";
}
function boardPicture(st, size) {
  return "data:image/svg+xml;base64," + btoa(drawBoard(st, size));
}
function singleHtml(st) {
  const [top, bottom] = sides(st);
  return '<div class="title"></div>' + playerHtml(st, top, "top") +
    '<div class="boardbox"><img id="board" alt="board" data-fen=""></div>' +
    playerHtml(st, bottom, "bottom") + '<div class="banner" role="alert"></div>' +
    '<div class="result"></div><div class="moves" id="moves"></div>';
}
const GRID_BOARD_SIZE = 360;  // a card's picture, drawn at this size
// -- the wall screen: cards sized so that a page of boards fills the screen ------
const WALL_GAP = 8, WALL_PAD = 4, WALL_BORDER = 2, WALL_CARD_GAP = 3;
const WALL_FONT = 0.075;  // a card's text: this part of its board's width (a name
// of 16 letters and a clock of 1:29:59 fit on one line as wide as the board)
function wallFit(count) {
  // The most columns-by-rows that gives each board the largest square: a card is
  // the board plus four lines (title, two players, last move) of 1.3 times its text.
  const status = document.getElementById("status-line").offsetHeight;
  const pad = parseFloat(getComputedStyle(document.body).paddingLeft) || 0;
  const width = window.innerWidth - 2 * pad;
  const height = window.innerHeight - status - pad;
  const frame = 2 * WALL_PAD + 2 * WALL_BORDER;
  let best = null;
  for (let cols = 1; cols <= Math.max(1, count); cols++) {
    const rows = Math.ceil(count / cols);
    const cw = Math.floor((width - (cols - 1) * WALL_GAP) / cols);
    const ch = Math.floor((height - (rows - 1) * WALL_GAP) / rows);
    const board = Math.floor(Math.min(cw - frame,
      (ch - frame - 4 * WALL_CARD_GAP) / (1 + 4 * 1.3 * WALL_FONT)));
    if (board > 0 && (!best || board > best.board)) best = {cols, rows, cw, ch, board};
  }
  return best || {cols: 1, rows: 1, cw: width, ch: height, board: 40};
}
function wallPerPage(total) {
  if (WALL.mode !== "cycle") return total;
  if (WALL.per) return Math.min(WALL.per, total);
  let per = 1;  // as many as fit with each board a quarter of the height at least
  while (per < total && wallFit(per + 1).board >= window.innerHeight / 4) per += 1;
  return per;
}
function wallIds() {
  const per = wallPerPage(boardOrder.length);
  const pages = Math.max(1, Math.ceil(boardOrder.length / per));
  wallPage = wallPage % pages;
  return {ids: boardOrder.slice(wallPage * per, (wallPage + 1) * per), per, pages};
}
function fitWall() {
  const app = document.getElementById("app");
  if (!app.classList.contains("wall")) return;
  const fit = wallFit(wallPerPage(boardOrder.length));
  const font = Math.max(10, Math.floor(fit.board * WALL_FONT));
  const line = Math.ceil(1.3 * font);
  // A card as tall as what it holds; the rows are centred on the screen.
  const tall = fit.board + 2 * WALL_PAD + 2 * WALL_BORDER + 4 * line + 4 * WALL_CARD_GAP;
  const vars = {"--cols": fit.cols, "--cw": fit.cw + "px", "--ch": Math.min(fit.ch, tall) + "px",
    "--gap": WALL_GAP + "px", "--cp": WALL_PAD + "px", "--cg": WALL_CARD_GAP + "px",
    "--bw": WALL_BORDER + "px", "--b": fit.board + "px", "--f": font + "px",
    "--line": line + "px"};
  for (const [name, value] of Object.entries(vars)) app.style.setProperty(name, String(value));
  shrinkNames(app, font);
}
function textWidth(el) {  // the text's own width, to the fraction of a pixel
  const range = document.createRange();
  range.selectNodeContents(el);
  return range.getBoundingClientRect().width;
}
function shrinkNames(root, font) {
  // A long name gets smaller type (down to 75%) before it is cut short.
  for (const el of root.querySelectorAll(".card .name")) {
    el.style.fontSize = "";
    let size = font;
    while (el.scrollWidth >= el.clientWidth && textWidth(el) > el.clientWidth &&
           size > Math.max(12, 0.75 * font)) {
      size -= 1;
      el.style.fontSize = size + "px";
    }
  }
}
function wallStatus() {
  if (!WALL.mode || chosen || boardOrder.length < 2) return "";
  const {ids, pages} = wallIds();
  if (pages < 2) return "";
  const label = id => states[id] ? states[id].label : id;
  return " · page " + (wallPage + 1) + "/" + pages + ": " + label(ids[0]) + "–" +
    label(ids[ids.length - 1]);
}
if (WALL.mode === "cycle") {
  setInterval(() => {
    if (!chosen && boardOrder.length > 1) { wallPage += 1; layout(); showLive(); }
  }, WALL.every * 1000);
}
window.addEventListener("resize", () => { if (WALL.mode) layout(); });
function layout() {
  const app = document.getElementById("app");
  const wall = !!WALL.mode && !chosen && boardOrder.length > 1;
  const ids = chosen ? [chosen] : wall ? wallIds().ids : boardOrder;
  const key = ids.map(id => id + ":" + (states[id] ? states[id].orientation : "")).join(",") +
    (wall ? "|wall" : "");
  if (app.dataset.layout === key && app.children.length) {
    for (const id of ids) render(id);  // the server drew it already: no flash
    fitWall();
    return;
  }
  if (ids.length === 1) {
    const st = states[ids[0]];
    if (!st) { app.className = ""; app.removeAttribute("data-board");
      app.innerHTML = "<p class='title'>No board " + esc(ids[0]) + "</p>"; return; }
    app.className = "single";
    app.dataset.board = st.board;
    app.innerHTML = singleHtml(st);
  } else {
    app.className = wall ? "grid wall" : "grid";
    app.removeAttribute("data-board");
    app.innerHTML = ids.map(id => {
      const st = states[id];
      const [top, bottom] = sides(st);
      return '<a class="card" href="?board=' + encodeURIComponent(id) + '" data-board="' +
        esc(id) + '"><div class="title"></div>' + playerHtml(st, top, "top") +
        '<img alt="board ' + esc(id) + '" data-fen="">' + playerHtml(st, bottom, "bottom") +
        '<div class="banner" role="alert"></div><div class="result"></div>' +
        '<div class="lastmove"></div></a>';
    }).join("");
  }
  app.dataset.layout = key;
  for (const id of ids) render(id);
  fitWall();
}
function boardKey(st) {
  const marked = st.irregularity ? (st.irregularity.squares || []).join(",") : "";
  return st.fen + "|" + st.orientation + "|" + (st.last_move ? st.last_move.uci : "") +
    "|" + marked;
}
function swapBoard(img, st, size) {
  const key = boardKey(st);
  if (img.dataset.key === key) return;
  img.dataset.key = key;
  const next = new Image();
  next.onload = () => { if (img.dataset.key === key) { img.src = next.src;
    img.dataset.fen = st.fen; img.dataset.ply = st.ply; } };
  next.src = boardPicture(st, size);
}
function drawFirstBoards() {
  // The first response's cards name their boards (data-key, as boardKey writes it):
  // drawn at once, before the event stream connects.
  for (const img of document.querySelectorAll("#app .card img[data-key]")) {
    if (img.getAttribute("src")) continue;
    const [fen, orientation, uci, marked] = img.dataset.key.split("|");
    img.src = boardPicture({fen, orientation, last_move: uci ? {uci} : null,
      check: img.dataset.check || null, irregularity: marked ? {squares: marked.split(",")} : null},
      GRID_BOARD_SIZE);
  }
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
  // start_fen is the position at ply start_ply (an accepted position, a resume)
  return full + Math.floor((ply - 1 - (st.start_ply || 0) + (parts[1] === "b" ? 1 : 0)) / 2);
}
function render(id) {
  const st = states[id];
  const root = document.querySelector('[data-board="' + CSS.escape(id) + '"]');
  if (!st || !root) return;
  const single = root.id === "app";
  const round = st.headers.round && st.headers.round !== "?" ? " · Round " + st.headers.round
    : "";
  root.querySelector(".title").textContent = st.label + round;
  for (const el of root.querySelectorAll(".player")) {  // names set during the round
    el.querySelector(".name").textContent = playerName(st, el.dataset.side);
  }
  const banner = root.querySelector(".banner");
  let alertText = st.irregularity ? irregularityText(st.irregularity) : "";
  if (!alertText && st.status && st.status.connected === false) alertText = "Board not connected";
  banner.textContent = alertText;
  banner.classList.toggle("shown", !!alertText);
  const result = root.querySelector(".result");
  result.textContent = resultText(st) || noteText(st);
  result.classList.toggle("shown", !!result.textContent);
  const img = single ? document.getElementById("board") : root.querySelector("img");
  swapBoard(img, st, single ? 0 : GRID_BOARD_SIZE);
  if (single) {
    const moves = document.getElementById("moves");
    const html = movesHtml(st);
    if (moves.dataset.html !== html) { moves.innerHTML = html; moves.dataset.html = html; }
    scrollToLast(moves);
  } else {
    const lm = st.last_move;
    root.querySelector(".lastmove").textContent = lm ?
      moveNumber(st, lm.ply) + (lm.by === "white" ? ". " : "… ") + lm.figurine : "";
  }
  tickBoard(id);
}
function scrollToLast(box) {
  // Only the move list's own box scrolls (scrollIntoView would scroll the page too).
  const last = box.querySelector(".last");
  if (!last) return;
  const top = last.offsetTop, bottom = top + last.offsetHeight;
  if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, bottom - box.clientHeight + 4);
  }
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
    sourceProblem = msg.source_problem || null;
    const order = Object.keys(msg.boards);
    for (const id of order) { states[id] = msg.boards[id]; receivedAt[id] = performance.now(); }
    boardOrder = order;
    layout();
  } else if (msg.kind === "event" && msg.state) {
    const isNew = !(msg.board in states);
    states[msg.board] = msg.state;
    receivedAt[msg.board] = performance.now();
    if (isNew) { boardOrder.push(msg.board); layout(); } else { render(msg.board); }
  } else if (msg.kind === "source") {
    sourceProblem = msg.problem || null;
  } else if (msg.kind === "status" && states[msg.board]) {
    states[msg.board].status = msg.status;
    render(msg.board);
  }
  showLive();
}
function showLive() {  // "live" only when the feed's own source is there too
  if (sourceProblem) statusLine("not live: " + sourceProblem, true);
  else statusLine("live " + batteryText() + wallStatus(), false);
}
function connect() {
  if (source) source.close();
  const q = "state=1" + (chosen ? "&board=" + encodeURIComponent(chosen) : "");
  source = new EventSource("/events?" + q);
  source.onmessage = onMessage;
  source.addEventListener("ping", () => { lastMessage = Date.now(); });
  source.onopen = () => showLive();
  source.onerror = () => {
    statusLine("connection lost — reconnecting…", true);
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
  };
}
drawFirstBoards();
setInterval(() => { for (const id of Object.keys(states)) tickBoard(id); }, 100);
setInterval(() => {  // keep-alive comments arrive every few seconds; silence: reopen
  if (Date.now() - lastMessage > 40000) { lastMessage = Date.now(); connect(); }
}, 5000);
connect();
</script>
</body>
</html>
"""


# -- the first response: the page drawn on the server -----------------------------
#
# The page must never be empty while the event stream connects (or when it
# cannot): the first HTML already holds the board as SVG, the names, the clocks
# and the moves, in exactly the markup the script builds, so the script's first
# snapshot finds its layout in place and only updates it (no flash). A grid's
# cards name their positions and the script draws them as it starts (a hall's
# 26 boards drawn here were 1.1 MB a viewer).


def board_svg(hub: Hub, board_id: str, size: int | None = None) -> Picture:
    """The board's picture as python-chess draws it (``boardpicture.picture``)."""
    return picture(hub.boards[board_id].record, hub.orientation(board_id), size)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def clock_text(seconds: float) -> str:
    """As the script's ``fmtClock``: 1:29:59, 4:05, and tenths below ten seconds."""
    seconds = max(0.0, seconds)
    whole = math.floor(seconds + 1e-6)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if seconds < 10:
        head = f"{hours}:{minutes:02d}:" if hours else f"{minutes}:"
        return f"{head}{secs:02d}.{math.floor((seconds % 1) * 10)}"
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _sides(state: dict[str, Any]) -> tuple[str, str]:
    return ("white", "black") if state["orientation"] == "black" else ("black", "white")


def _player(state: dict[str, Any], side: str, where: str) -> str:
    name = state["headers"].get(side)
    if not name or name == "?":
        name = side.capitalize()
    clock = state.get("clock")
    running = bool(clock and clock.get("running") == side and not state.get("result"))
    seconds = clock.get(side) if clock else None
    low = " low" if isinstance(seconds, int | float) and seconds < 60 else ""
    shown = clock_text(seconds) if isinstance(seconds, int | float) else "–"
    return (
        f'<div class="player {where}{" running" if running else ""}{low}" data-side="{side}">'
        f'<span class="name">{_esc(name)}</span><span class="clock">{shown}</span></div>'
    )


def _title(state: dict[str, Any]) -> str:
    round_ = state["headers"].get("round")
    return state["label"] + (f" · Round {round_}" if round_ and round_ != "?" else "")


def _result(state: dict[str, Any]) -> str:
    result = state.get("result")
    if not result:
        return '<div class="result"></div>'
    text = result.replace("1/2", "½")
    if state.get("result_reason"):
        text += f" ({state['result_reason'].replace('_', ' ')})"
    return f'<div class="result shown">{_esc(text)}</div>'


def _move_number(state: dict[str, Any], ply: int) -> int:
    parts = (state.get("start_fen") or "").split(" ")
    try:
        full = int(parts[5]) if len(parts) > 5 else 1
    except ValueError:
        full = 1
    start_ply = state.get("start_ply") or 0  # start_fen's ply (an accepted position)
    black = 1 if len(parts) > 1 and parts[1] == "b" else 0
    return full + (ply - 1 - start_ply + black) // 2


def _moves(state: dict[str, Any]) -> str:
    """The move list as the script's ``movesHtml`` writes it."""
    moves, rows, i = state["moves"], [], 0
    while i < len(moves):
        move = moves[i]
        white = black = None
        if move["by"] == "white":
            white = move
            if i + 1 < len(moves) and moves[i + 1]["by"] == "black":
                black = moves[i + 1]
                i += 1
        else:
            black = move
        i += 1

        def cell(mv: dict[str, Any] | None) -> str:
            if mv is None:
                return "<span>…</span>"
            last = " last" if mv["ply"] == state["ply"] else ""
            return f'<span class="mv{last}" data-ply="{mv["ply"]}">{_esc(mv["figurine"])}</span>'

        number = _move_number(state, move["ply"])
        rows.append(f'<div class="row"><span class="no">{number}.</span>{cell(white)}'
                    f"{cell(black)}</div>")  # fmt: skip
    return "".join(rows)


def _board_key(state: dict[str, Any]) -> str:
    """As the script's ``boardKey``: what the drawn board shows."""
    irregularity = state.get("irregularity") or {}
    last = state.get("last_move")
    return "|".join((state["fen"], state["orientation"], last["uci"] if last else "",
                     ",".join(irregularity.get("squares") or [])))  # fmt: skip


def _img(hub: Hub, state: dict[str, Any], *, size: int | None, alt: str, id_: str) -> str:
    """The single board's picture, drawn into the page (it shows without a script)."""
    svg = board_svg(hub, state["board"], size).svg.encode()
    source = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    return (f'<img{id_} alt="{_esc(alt)}" src="{source}" data-key="{_esc(_board_key(state))}" '
            f'data-fen="{_esc(state["fen"])}" data-ply="{state["ply"]}">')  # fmt: skip


def _card_img(state: dict[str, Any]) -> str:
    """A card's picture, for the script to draw (``drawFirstBoards``)."""
    check = f' data-check="{_esc(state["check"])}"' if state.get("check") else ""
    return (f'<img alt="board {_esc(state["board"])}" data-key="{_esc(_board_key(state))}" '
            f'data-fen="{_esc(state["fen"])}" data-ply="{state["ply"]}"{check}>')  # fmt: skip


def _single(hub: Hub, state: dict[str, Any]) -> str:
    top, bottom = _sides(state)
    moves = _moves(state)
    layout = f"{state['board']}:{state['orientation']}"
    return (
        f'<main id="app" class="single" aria-live="polite" data-board="{_esc(state["board"])}"'
        f' data-layout="{_esc(layout)}">'
        f'<div class="title">{_esc(_title(state))}</div>{_player(state, top, "top")}'
        f'<div class="boardbox">{_img(hub, state, size=None, alt="board", id_=" id=board")}'
        f"</div>{_player(state, bottom, 'bottom')}"
        f'<div class="banner" role="alert"></div>{_result(state)}'
        f'<div class="moves" id="moves" data-html="{_esc(moves)}">{moves}</div></main>'
    )


def _card(state: dict[str, Any]) -> str:
    top, bottom = _sides(state)
    board_id = state["board"]
    image = _card_img(state)
    last = state.get("last_move")
    lastmove = ""
    if last:
        lastmove = f"{_move_number(state, last['ply'])}{'. ' if last['by'] == 'white' else '… '}"
        lastmove += last["figurine"]
    return (
        f'<a class="card" href="?board={_esc(board_id)}" data-board="{_esc(board_id)}">'
        f'<div class="title">{_esc(_title(state))}</div>{_player(state, top, "top")}{image}'
        f'{_player(state, bottom, "bottom")}<div class="banner" role="alert"></div>'
        f'{_result(state)}<div class="lastmove">{_esc(lastmove)}</div></a>'
    )


def render_page(hub: Hub, chosen: str | None = None) -> str:
    """The live page with the game(s) already drawn: ``?board=N`` or all boards."""
    ids = [chosen] if chosen else hub.board_ids()
    if len(ids) == 1 and ids[0] in hub.boards:
        app = _single(hub, hub.page_state(ids[0]))
    elif len(ids) > 1:
        states = [hub.page_state(board_id) for board_id in ids]
        layout = ",".join(f"{st['board']}:{st['orientation']}" for st in states)
        cards = "".join(_card(st) for st in states)
        app = (f'<main id="app" class="grid" aria-live="polite" data-layout="{_esc(layout)}">'
               f"{cards}</main>")  # fmt: skip
    else:  # no such board (yet): the script says so, or shows it once it comes
        app = '<main id="app" aria-live="polite"></main>'
    kit = board_kit(frozenset(hub.orientation(board_id) for board_id in hub.boards) or
                    frozenset({hub.settings.orientation}))  # fmt: skip
    page = PAGE.replace("/*BOARD_KIT*/null", kit, 1)
    return page.replace("<body>", _body(hub), 1).replace("<!--APP-->", app, 1)


def _body(hub: Hub) -> str:
    """The configuration's wall screen (``broadcast.wall``) for the script; the URL's
    ``?wall=`` overrides it on one screen."""
    settings = hub.settings
    wall = getattr(settings, "wall", "")
    if not wall:
        return "<body>"
    return (f'<body data-wall="{_esc(wall)}" data-wall-per="{int(settings.wall_boards_per_page)}"'
            f' data-wall-every="{float(settings.wall_page_seconds):g}">')  # fmt: skip
