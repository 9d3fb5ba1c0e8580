"""The phone page's HTML (``/listen``) and the code page (``/l``): one file each,
nothing loaded from elsewhere (the hall's Wi-Fi has no Internet), every control a
named button or a labelled field, every change said through a live region.

The page speaks with the phone's own ``speechSynthesis`` once the player has
pressed "start" (browsers let a page speak only after a press). With the phone's
screen reader on, its own voice would talk over the page's: "Ansagen über den
Screenreader" puts each phrase into an assertive live region instead, for
TalkBack or VoiceOver to say. Each phrase said is reported (``/listen/spoken``),
so the daemon's schedule keeps moves first.
"""

from __future__ import annotations

import html
from typing import Any

#: The page's own words, by the vocabulary's language (its voice's first part).
WORDS: dict[str, dict[str, str]] = {
    "de": {
        "board": "Brett", "start": "Ansagen starten", "started": "Ansagen gestartet",
        "idle": "Noch nicht gestartet. Taste Ansagen starten drücken.",
        "connected": "Verbunden", "lost": "Verbindung verloren, neuer Versuch",
        "asked": "Gefragt", "refused": "Abgelehnt", "questions": "Fragen",
        "reader": "Ansagen über den Screenreader", "said": "Zuletzt gesagt",
        "square_ask": "Feld fragen", "square_hint": "zum Beispiel e4",
        "code": "Code vom Schiedsrichter", "open": "Öffnen",
        "code_title": "Ansagen für blinde Spieler",
    },
    "en": {
        "board": "Board", "start": "Start announcements", "started": "Announcements started",
        "idle": "Not started yet. Press Start announcements.",
        "connected": "Connected", "lost": "Connection lost, trying again",
        "asked": "Asked", "refused": "Refused", "questions": "Questions",
        "reader": "Announcements through the screen reader", "said": "Last said",
        "square_ask": "Ask about the square", "square_hint": "for example e4",
        "code": "Code from the arbiter", "open": "Open",
        "code_title": "Announcements for blind players",
    },
    "es": {
        "board": "Tablero", "start": "Iniciar anuncios", "started": "Anuncios iniciados",
        "idle": "Aún no iniciado. Pulse Iniciar anuncios.",
        "connected": "Conectado", "lost": "Conexión perdida, reintentando",
        "asked": "Preguntado", "refused": "Rechazado", "questions": "Preguntas",
        "reader": "Anuncios por el lector de pantalla", "said": "Último anuncio",
        "square_ask": "Preguntar por la casilla", "square_hint": "por ejemplo e4",
        "code": "Código del árbitro", "open": "Abrir",
        "code_title": "Anuncios para jugadores ciegos",
    },
}  # fmt: skip

STYLE = """
:root { color-scheme: light dark; }
* { box-sizing: border-box; }
body { margin: 0 auto; padding: 10px; max-width: 640px;
  font: 22px/1.35 "DejaVu Sans", "Noto Sans", Arial, sans-serif; }
h1 { font-size: 26px; margin: 0 0 8px; }
h2 { font-size: 20px; margin: 16px 0 6px; }
button, input { font: inherit; }
button { display: block; width: 100%; min-height: 72px; margin: 8px 0; padding: 10px;
  border: 3px solid currentColor; border-radius: 10px; background: Canvas; color: CanvasText; }
button:focus-visible, input:focus-visible { outline: 5px solid Highlight; outline-offset: 2px; }
#start { font-weight: bold; }
input { width: 100%; min-height: 64px; padding: 8px; border: 3px solid currentColor; }
.hidden { display: none; }
#said { font-size: 26px; min-height: 2.7em; }
"""

SCRIPT = r"""
"use strict";
const $ = id => document.getElementById(id);
const W = JSON.parse($("words").textContent);
const query = new URLSearchParams(location.search);
const base = "?board=" + encodeURIComponent(query.get("board") || "") +
  "&side=" + encodeURIComponent(query.get("side") || "") +
  "&code=" + encodeURIComponent(query.get("code") || "");
let source = null, reader = false;
function synth() { return window.speechSynthesis || null; }
function status(text) { $("status").textContent = text; }
function post(path, body) {
  return fetch(path + base, {method: "POST", cache: "no-store",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
}
function done(id) { post("/listen/spoken", {id: id}).catch(() => {}); }
function speak(m) {
  $("said").textContent = m.text;
  const voice = synth();
  if (reader || !voice || typeof SpeechSynthesisUtterance === "undefined") {
    // the screen reader says the live region; about as long as the phrase takes
    setTimeout(() => done(m.id), 400 + 70 * m.text.length / Math.max(0.5, m.rate));
    return;
  }
  const u = new SpeechSynthesisUtterance(m.text);
  u.lang = m.lang; u.rate = Math.max(0.5, Math.min(2.5, m.rate));
  let reported = false;
  u.onend = u.onerror = () => { if (!reported) { reported = true; done(m.id); } };
  voice.speak(u);
}
function connect() {
  if (source) source.close();
  source = new EventSource("/listen/events" + base);
  source.onopen = () => status(W.connected);
  source.onerror = () => status(W.lost);
  source.onmessage = e => {
    let m;
    try { m = JSON.parse(e.data); } catch (err) { return; }
    if (m.type === "say") speak(m);
    else if (m.type === "cancel" && synth() && !reader) synth().cancel();
  };
}
$("start").addEventListener("click", () => {
  const voice = synth();
  if (voice && !reader && typeof SpeechSynthesisUtterance !== "undefined") {
    const u = new SpeechSynthesisUtterance(W.started);  // in the press: the phone may speak
    u.lang = W.lang; voice.speak(u);
  }
  connect();
  $("start").classList.add("hidden");
  $("questions").classList.remove("hidden");
  document.querySelector("#questions button").focus();
});
async function ask(body, label) {
  let response;
  try { response = await post("/listen/ask", body); }
  catch (e) { status(W.lost); return; }
  if (response.ok) { status(W.asked + ": " + label); return; }
  let answer = {};
  try { answer = await response.json(); } catch (e) { answer = {}; }
  status(W.refused + ": " + (answer.error || response.status));
}
for (const b of document.querySelectorAll("button[data-what]")) {
  b.addEventListener("click", () => {
    const body = {what: b.dataset.what};
    if (b.dataset.order) body.order = b.dataset.order;
    ask(body, b.textContent);
  });
}
$("square-form").addEventListener("submit", e => {
  e.preventDefault();
  const square = $("square").value.trim().toLowerCase();
  ask({what: "square", square: square}, $("square-ask").textContent + " " + square);
});
$("reader").addEventListener("click", () => {
  reader = !reader;
  $("reader").setAttribute("aria-pressed", String(reader));
  $("said").setAttribute("aria-live", reader ? "assertive" : "off");
  if (reader && synth()) synth().cancel();
});
"""


def words_for(lang: str) -> dict[str, str]:
    return WORDS.get(lang.split("-")[0], WORDS["en"])


def listen_page(board: str, side: str, speech: dict[str, Any]) -> str:
    """One player's page; ``speech``: the vocabulary's ``lang``, ``requests`` names
    and ``colours``, so the buttons say what the earphone's answers call them."""
    lang = str(speech.get("lang") or "de")
    words = {**words_for(lang), "lang": lang}
    requests = {
        "last": "Last move", "moves": "Last moves", "clock": "Clock", "move_number":
        "Move number", "board": "Position", **speech.get("requests", {})}  # fmt: skip
    colours = {"white": "White", "black": "Black", **speech.get("colours", {})}
    other = "black" if side == "white" else "white"
    e = html.escape
    buttons = [
        ("last", "", requests["last"]),
        ("moves", "", requests["moves"]),
        ("clock", "", requests["clock"]),
        ("move_number", "", requests["move_number"]),
        ("board", "", requests["board"]),
        ("board", "own", f"{requests['board']}: {colours[side]}"),
        ("board", "opponent", f"{requests['board']}: {colours[other]}"),
    ]
    rows = "\n".join(
        f'<button type="button" data-what="{what}"'
        + (f' data-order="{order}"' if order else "")
        + f">{e(label)}</button>"
        for what, order, label in buttons
    )
    title = f"{words['board']} {board}: {colours[side]}"
    data = _json(words)  # raw text in its script element: not entity-decoded
    main = f"""<h1 id="title">{e(title)}</h1>
<p id="status" role="status" aria-live="polite">{e(words["idle"])}</p>
<button type="button" id="start">{e(words["start"])}</button>
<section id="questions" class="hidden" aria-labelledby="questions-title">
<h2 id="questions-title">{e(words["questions"])}</h2>
{rows}
<form id="square-form">
<label for="square">{e(requests.get("square", "Square"))} ({e(words["square_hint"])})</label>
<input id="square" name="square" autocomplete="off" autocapitalize="off" maxlength="2"
  inputmode="text" required>
<button type="submit" id="square-ask">{e(words["square_ask"])}</button>
</form>
<button type="button" id="reader" aria-pressed="false">{e(words["reader"])}</button>
</section>
<h2 id="said-title">{e(words["said"])}</h2>
<p id="said" aria-live="off" aria-labelledby="said-title"></p>"""
    scripts = f"""<script type="application/json" id="words">{data}</script>
<script>{SCRIPT}</script>
"""
    return _page(lang, title, main, scripts)


def code_page(lang: str = "de") -> str:
    """``/l``: the field for the code the arbiter read out."""
    words = words_for(lang)
    e = html.escape
    main = f"""<h1>{e(words["code_title"])}</h1>
<form method="get" action="/l">
<label for="code">{e(words["code"])}</label>
<input id="code" name="code" inputmode="numeric" autocomplete="off" maxlength="4"
  pattern="[0-9]{{4}}" required autofocus>
<button type="submit">{e(words["open"])}</button>
</form>
<p id="error" role="alert"></p>"""
    return _page(lang, words["code_title"], main)


def _page(lang: str, title: str, main: str, scripts: str = "") -> str:
    """A whole page of a phone: its viewport, no referrer, the one style; ``main``
    and ``scripts`` are HTML."""
    e = html.escape
    return f"""<!DOCTYPE html>
<html lang="{e(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{e(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<main>
{main}
</main>
{scripts}</body>
</html>
"""


def _json(data: dict[str, str]) -> str:
    import json

    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
