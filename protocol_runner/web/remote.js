// The remote page: this device's hand and the public game, pushed over a WebSocket that
// reconnects by itself; buttons send the move to the cardtable process, which referees it.
"use strict";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token") || "";
const COLOURS = { R: "red", Y: "yellow", G: "green", B: "blue" };
let view = null;
let pending = null;   // the W / +4 waiting for its colour
let retryMs = 500;

function colourOf(code) {
  if (code === "W" || code === "+4") return "K";
  const c = code.slice(-1);
  return "RYGB".includes(c) ? c : "";
}

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function say(text, kind) {
  $("message").textContent = text;
  $("message").className = `message ${kind || ""}`;
}

function send(body) {
  return fetch("/api/move", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Cardtable-Token": token },
    body: JSON.stringify(body),
  }).then(async (r) => {
    const answer = await r.json().catch(() => ({}));
    if (answer.state) render(answer.state);
    if (!r.ok) throw new Error(answer.detail || `${r.status} ${r.statusText}`);
    say("", "");
  }).catch((err) => say(err.message, "bad"));
}

function play(card) {
  // out of turn the move goes straight to the referee, which says whose turn it is: a colour
  // picker would only be closed again by the next push
  if (colourOf(card.card) === "K" && view && view.my_turn) {
    pending = card;
    $("colour-card").textContent = card.card;
    $("colour-choice").hidden = false;
    return;
  }
  send({ move: "play", slot: card.slot });
}

// ---- connection -------------------------------------------------------------------------
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${proto}://${location.host}/ws?token=${encodeURIComponent(token)}`);
  socket.onopen = () => {
    retryMs = 500;
    if (view) view.version = -1;  // maybe a restarted process: take what it says
    $("conn").textContent = "live";
    $("conn").className = "conn up";
  };
  socket.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "state") render(msg.state);
  };
  socket.onclose = (ev) => {
    $("conn").textContent = ev.code === 4401 ? "wrong token: open the URL cardtable printed" : "reconnecting…";
    $("conn").className = "conn down";
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 4000);
  };
}

// ---- rendering --------------------------------------------------------------------------
function render(state) {
  if (view && state.version < view.version) return;  // an answer older than a push
  view = state;
  const game = state.game;
  $("me").textContent = `you are ${state.me_name}`;
  let banner = "";
  if (state.phase === "done" || (game && game.winner)) banner = game && game.winner ? `${game.winner} won` : "game over";
  else if (state.my_turn) banner = "your turn";
  else if (game && game.top && !state.waiting_for) banner = `${game.turn}'s turn`;
  else banner = `setting up: ${state.phase}${state.waiting_for ? ` (${state.waiting_for})` : ""}`;
  $("turn-banner").textContent = banner;

  const hand = $("hand");
  hand.replaceChildren();
  for (const card of state.hand) {
    const tile = el("button", { type: "button", class: `tile ${colourOf(card.card)}`,
      "data-testid": "card", "data-card": card.card, "data-slot": String(card.slot),
      title: card.playable ? `play ${card.card}` : `${card.card} (not playable now)` }, card.card);
    if (card.playable) tile.classList.add("playable");
    else if (state.my_turn) tile.classList.add("dim");
    tile.addEventListener("click", () => play(card));
    hand.append(tile);
  }
  $("hand-count").textContent = `(${state.hand.length} card${state.hand.length === 1 ? "" : "s"})`;
  $("btn-draw").disabled = !state.my_turn || !!(game && game.drawn);
  $("btn-pass").disabled = !state.my_turn || !(game && game.drawn);
  if (!state.my_turn) { pending = null; $("colour-choice").hidden = true; }

  const top = $("top");
  top.textContent = game && game.top ? game.top : "–";
  top.className = `tile big ${game && game.top ? colourOf(game.top) : ""}`;
  const facts = $("facts");
  facts.replaceChildren();
  const fact = (k, v) => { facts.append(el("dt", {}, k)); facts.append(el("dd", { "data-fact": k }, v)); };
  if (game) {
    fact("colour", game.colour_in_force ? COLOURS[game.colour_in_force] : (game.top ? COLOURS[colourOf(game.top)] || "–" : "–"));
    fact("direction", game.direction);
    fact("turn", game.winner ? "–" : game.turn);
    fact("pack", String(state.pack_size ?? "–"));
    fact("played", String(game.turns_played));
  }
  fact("phase", state.phase);
  if (state.die) fact("die", String(state.die));

  const players = $("players");
  players.replaceChildren();
  for (const [i, p] of (game ? game.players : []).entries()) {
    const you = i === state.me ? " (you)" : "";
    const li = el("li", { "data-testid": "player" }, `${p.name}${you}: ${p.hand_size} card${p.hand_size === 1 ? "" : "s"}`);
    if (game.winner === p.name) li.classList.add("winner");
    else if (!game.winner && game.turn === p.name) li.classList.add("turn");
    players.append(li);
  }
  const audit = $("audit");
  audit.hidden = !state.audit;
  if (state.audit) {
    const a = state.audit;
    audit.className = `verdict ${a.clean ? "ok" : "bad"}`;
    audit.textContent = a.clean
      ? `audit: no cheat found (${a.passes_checked} passes, ${a.values_checked} values replayed, ${a.cards_followed} drawn cards followed)`
      : `audit: ${a.findings.length} CHEAT(S) FOUND: ${a.findings.map((f) => `device ${f.device}, entry ${f.entry}: ${f.what}`).join("; ")}`;
  }
}

// ---- buttons ----------------------------------------------------------------------------
$("btn-draw").addEventListener("click", () => send({ move: "draw" }));
$("btn-pass").addEventListener("click", () => send({ move: "pass" }));
for (const b of document.querySelectorAll("button.colour")) {
  b.addEventListener("click", () => {
    if (!pending) return;
    const card = pending;
    pending = null;
    $("colour-choice").hidden = true;
    send({ move: "play", slot: card.slot, colour: b.dataset.colour });
  });
}
$("colour-cancel").addEventListener("click", () => { pending = null; $("colour-choice").hidden = true; });

fetch(`/api/state?token=${encodeURIComponent(token)}`).then((r) => (r.ok ? r.json() : null))
  .then((s) => { if (s) render(s); }).catch(() => {});
connect();
