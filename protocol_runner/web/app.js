// The dashboard page: renders the pipeline's JSON view, sends button presses, and keeps a
// WebSocket open, reconnecting by itself (and re-fetching the state) after a server restart.
"use strict";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token");
const SVG = "http://www.w3.org/2000/svg";
let view = null;          // last state received
let selected = null;      // the card clicked for correction
let frameUrl = null;      // object URL of the camera JPEG shown
let socket = null;
let retryMs = 500;

function api(path, options = {}) {
  const headers = { "Content-Type": "application/json", ...(options.headers || {}) };
  if (token) headers["X-Cardtable-Token"] = token;
  return fetch(path, { ...options, headers }).then(async (r) => {
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.detail || body.error || `${r.status} ${r.statusText}`);
    return body;
  });
}

function el(tag, attrs = {}, text) {
  const ns = ["svg", "rect", "text", "polygon", "circle", "ellipse", "g", "line", "path"].includes(tag);
  const node = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function chip(code) {
  const c = el("span", { class: "chip" }, code);
  const colour = code === "W" || code === "+4" ? "K" : code.slice(-1);
  if ("RYGB".includes(colour) && !/^(10|[2-9AJQK])[SHDC]$/.test(code)) c.classList.add(colour);
  if (colour === "K") c.classList.add("K");
  return c;
}

// ---- connection -------------------------------------------------------------------------
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const url = `${proto}://${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ""}`;
  socket = new WebSocket(url);
  socket.binaryType = "blob";
  socket.onopen = () => {
    retryMs = 500;
    if (view) view.version = -1;  // a new connection (maybe a new server): take what it says
    $("conn").textContent = "live";
    $("conn").className = "conn up";
    api("/api/state").then(render).catch(() => {});
  };
  socket.onmessage = (ev) => {
    if (typeof ev.data === "string") {
      const msg = JSON.parse(ev.data);
      if (msg.type === "state") render(msg.state);
    } else {
      showFrame(ev.data);
    }
  };
  socket.onclose = () => {
    $("conn").textContent = "reconnecting…";
    $("conn").className = "conn down";
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 4000);
  };
}

function showFrame(blob) {
  const url = URL.createObjectURL(blob);
  const img = $("camera");
  img.onload = () => { if (frameUrl && frameUrl !== url) URL.revokeObjectURL(frameUrl); frameUrl = url; };
  img.src = url;
  img.hidden = false;
  $("no-frame").hidden = true;
}

// ---- rendering --------------------------------------------------------------------------
function render(state) {
  // An HTTP answer may arrive after a newer push: never go back in time. A restarted server
  // counts from 0 again, which the reconnect handles (it resets the version first).
  if (view && state.version < view.version) return;
  view = state;
  const s = state.status || {};
  $("source").textContent = s.source ? `${s.mode} · ${s.source}` : (s.mode || "");
  $("frame-info").textContent = s.camera === false ? `as the script reads${s.finished ? " · ended" : ""}` : (s.frame != null ? `frame ${s.frame}${s.lag >= 0.5 ? ` · ${s.lag.toFixed(1)} s behind the video` : ""}${s.finished ? " · ended" : ""}` : "");
  const ins = state.instruction;
  const parts = [];
  if (ins && ins.step != null) parts.push(`step ${ins.step} of ${ins.steps}`);
  if (state.game && state.game.turn != null) parts.push(`turn ${state.game.turn}`);
  $("place").textContent = parts.join(", ");
  $("instruction").textContent = ins ? ins.text : (s.finished ? "The recording has ended." : (s.mode === "live" ? "Set up a game (New game…)" : "–"));
  $("where").textContent = ins ? [ins.where, ins.player ? `${ins.player}'s turn` : "", ins.context].filter(Boolean).join(" · ") : "";
  $("no-frame").textContent = s.camera === false ? "no camera: replaying an observations file" : (s.blind ? "" : "waiting for the camera…");
  $("blind").hidden = !s.blind;
  if (s.blind && ins) $("blind-reason").textContent = ins.text;
  renderDiagram(ins);
  renderVerdict(state.verdict);
  renderCards(state.cards || []);
  renderReading(s.camera === false && !s.blind ? state.reading : null);
  renderGame(state.game);
  renderTimeline(state.timeline || []);
  $("btn-shuffle").disabled = !s.blind;
  $("open-setup").hidden = s.mode !== "live";  // a replay's game was set up when recorded
  $("codes").replaceChildren(...(state.codes || []).map((c) => el("option", { value: c })));
  if (s.error || s.notice) $("message").textContent = s.error || s.notice;
}

function renderDiagram(ins) {
  // The work area as the table should look after this step: columns left to right, wrapped
  // into bands like on the mat; lit cells are the ones this step is about.
  const svg = $("diagram");
  svg.replaceChildren();
  const d = ins && ins.diagram;
  svg.toggleAttribute("hidden", !(d && d.columns));
  if (!(d && d.columns)) return;
  const W = Math.max(svg.getBoundingClientRect().width, 300);
  const cols = d.columns, rows = Math.max(d.rows || 1, 1);
  const perBand = Math.min(cols, Math.max(1, Math.floor((W - 8) / 16)));
  const bands = Math.ceil(cols / perBand);
  const cw = Math.min(44, (W - 8) / perBand - 3), gap = 3;
  const ch = Math.max(10, Math.min(cw * 1.4, 34));
  const bandH = 14 + rows * (ch + gap) + 6;
  const H = bands * bandH + 4;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.style.height = `${H}px`;
  const x0 = (W - perBand * (cw + gap)) / 2;
  const cells = new Map((d.cells || []).map((c) => [`${c.column},${c.row}`, c]));
  const every = cw < 14 ? 5 : 1;
  for (let c = 0; c < cols; c++) {
    const band = Math.floor(c / perBand), k = c % perBand;
    const x = x0 + k * (cw + gap), yb = 4 + band * bandH;
    const lit = [...Array(rows).keys()].some((r) => (cells.get(`${c + 1},${r + 1}`) || {}).highlight);
    if ((c + 1) % every === 0 || c === 0 || lit)
      svg.append(el("text", { x: x + cw / 2, y: yb + 10, class: `colno${lit ? " lit" : ""}` }, String(c + 1)));
    for (let r = 0; r < rows; r++) {
      const cell = cells.get(`${c + 1},${r + 1}`);
      if (!cell) continue;
      const y = yb + 14 + r * (ch + gap);
      const cls = ["cell", cell.highlight ? "hl" : "", cell.face ? "face" : "", cell.label === "?" ? "reveal" : ""].join(" ");
      svg.append(el("rect", { x, y, width: cw, height: ch, rx: 2, class: cls }));
      if (cell.label && cw >= 16) svg.append(el("text", { x: x + cw / 2, y: y + ch / 2 + 4 }, cell.label));
    }
  }
}

function renderVerdict(v) {
  const box = $("verdict");
  box.replaceChildren();
  box.className = "verdict";
  if (!v) return;
  if (v.ok) {
    box.classList.add("ok");
    box.textContent = `✓ ${v.text || "as expected"}`;
  } else {
    box.classList.add("bad");
    box.append(el("div", { class: "what" }, `✗ ${v.text}`));
    if (v.recover) box.append(el("div", { class: "fix" }, v.recover));
  }
}

function renderCards(cards) {
  const svg = $("card-hits");
  svg.replaceChildren();
  for (const card of cards) {
    if (!card.quad) continue;
    const poly = el("polygon", { points: card.quad.map((p) => p.join(",")).join(" ") });
    poly.append(el("title", {}, `${card.code} (${card.zone} column ${card.column}, row ${card.row})`));
    if (selected && selected.zone === card.zone && selected.column === card.column && selected.row === card.row)
      poly.classList.add("selected");
    poly.addEventListener("click", () => { selected = card; openCorrect(); });
    svg.append(poly);
  }
}

function renderReading(reading) {
  // No camera (an observations file is replayed): show the cells as read, clickable to correct.
  const svg = $("reading");
  svg.replaceChildren();
  svg.toggleAttribute("hidden", !reading);
  $("no-frame").hidden = !!reading || !$("camera").hidden;
  if (!reading) return;
  const box = svg.getBoundingClientRect();
  const W = Math.max(box.width, 320), H = Math.max(box.height, 180);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const zones = [["work", reading.work || []], ["side", reading.side || []]];
  const discard = reading.discard == null ? [] : [[Array.isArray(reading.discard) ? reading.discard[0] : reading.discard]];
  zones.push(["discard", discard]);
  let y = 4;
  for (const [zone, columns] of zones) {
    if (!columns.length) continue;
    const rows = Math.max(...columns.map((c) => c.length), 1);
    const per = Math.min(columns.length, Math.max(1, Math.floor((W - 8) / 16)));
    const cw = Math.min(40, (W - 8) / per - 2), ch = Math.max(9, Math.min(cw * 1.4, 30));
    svg.append(el("text", { x: 4, y: y + 9, class: "zone" }, zone));
    y += 12;
    columns.forEach((column, c) => {
      const band = Math.floor(c / per), k = c % per;
      column.forEach((raw, r) => {
        if (raw == null) return;
        const code = Array.isArray(raw) ? raw[0] : raw;
        const x = 4 + k * (cw + 2), yy = y + band * (rows * (ch + 2) + 6) + r * (ch + 2);
        const card = { zone, column: c + 1, row: r + 1, code };
        const rect = el("rect", { x, y: yy, width: cw, height: ch, rx: 2,
          class: code === "BACK" ? "back" : "face", "data-code": code, "data-zone": zone,
          "data-column": c + 1, "data-row": r + 1 });
        if (selected && selected.zone === zone && selected.column === c + 1 && selected.row === r + 1)
          rect.classList.add("selected");
        rect.append(el("title", {}, `${code} (${zone} column ${c + 1}, row ${r + 1})`));
        rect.addEventListener("click", () => { selected = card; openCorrect(); });
        svg.append(rect);
        if (code !== "BACK" && cw >= 18) svg.append(el("text", { x: x + cw / 2, y: yy + ch / 2 + 4 }, code));
      });
    });
    y += Math.ceil(columns.length / per) * (rows * (ch + 2) + 6) + 4;
    if (y > H) break;
  }
}

function renderGame(game) {
  const svg = $("table");
  svg.replaceChildren();
  const facts = $("game-facts");
  facts.replaceChildren();
  if (!game) return;
  svg.append(el("ellipse", { cx: 0, cy: 0, rx: 105, ry: 70, class: "felt" }));
  const players = game.players || [];
  players.forEach((p, i) => {
    const a = Math.PI / 2 + (2 * Math.PI * i) / Math.max(players.length, 1);
    const x = 128 * Math.cos(a), y = 92 * Math.sin(a);
    const g = el("g", { transform: `translate(${x.toFixed(1)},${y.toFixed(1)})` });
    const cls = ["seat", p.current ? "current" : "", p.winner ? "winner" : ""].join(" ");
    g.append(el("rect", { x: -30, y: -22, width: 60, height: 44, rx: 8, class: cls }));
    g.append(el("text", { y: -9 }, p.name));
    g.append(el("text", { y: 8, class: "hand" }, p.hand != null ? String(p.hand) : "?"));
    g.append(el("text", { y: 18, class: "kind" }, p.kind === "virtual" ? "virtual" : "human"));
    svg.append(g);
  });
  if (game.discard && game.discard.length) {
    const top = game.discard[game.discard.length - 1];
    svg.append(el("rect", { x: -16, y: -24, width: 32, height: 46, rx: 4, fill: "#f4f4f4" }));
    svg.append(el("text", { y: 4, fill: "#111", style: "fill:#111;font-weight:700;font-size:13px" }, top));
  }
  if (game.direction != null)
    svg.append(el("text", { y: 40 }, game.direction > 0 ? "↻ clockwise" : "↺ anticlockwise"));
  const add = (k, v) => { facts.append(el("dt", {}, k)); const dd = el("dd"); typeof v === "string" ? (dd.textContent = v) : dd.append(...v); facts.append(dd); };
  if (game.name) add("game", game.name);
  if (game.discard) add("discard", game.discard.slice(-6).map(chip));
  if (game.colour) add("colour in force", [chip(game.colour)]);
  const cur = players.find((p) => p.current);
  if (cur) add("whose turn", cur.name);
  if (game.deck != null) add("unplayed deck", String(game.deck));
  if (game.scores) add("scores", Object.entries(game.scores).map(([n, v]) => `${n} ${v}`).join(", "));
  if (game.winner) add("winner", game.winner);
  if (game.result) add("result", game.result);
}

function renderTimeline(items) {
  const list = $("timeline");
  const atBottom = list.scrollTop === 0;
  list.replaceChildren(...items.slice(-200).reverse().map((t) => {
    const li = el("li", { class: t.ok === false ? "bad" : (t.ok ? "ok" : "") },
      `${t.turn != null ? `turn ${t.turn} · ` : ""}${t.text}`);
    return li;
  }));
  if (atBottom) list.scrollTop = 0;
}

// ---- buttons ----------------------------------------------------------------------------
function say(text) { $("message").textContent = text; }

for (const btn of document.querySelectorAll("button[data-event]")) {
  btn.addEventListener("click", () => {
    if (btn.dataset.event === "abort_turn" && !confirm("Abort this turn? The table puts every card back.")) return;
    api(`/api/event/${btn.dataset.event}`, { method: "POST" })
      .then((r) => { say(""); if (r.state) render(r.state); })
      .catch((e) => say(e.message));
  });
}

function openCorrect() {
  renderCards(view ? view.cards || [] : []);
  $("correct-where").textContent = selected
    ? `${selected.zone}, column ${selected.column}, row ${selected.row}: the camera read ${selected.code}`
    : "Click a card in the camera view first.";
  // the code read is filled in: OK confirms a card the runner is unsure of; typing replaces it
  $("correct-code").value = selected ? selected.code : "";
  $("correct-error").textContent = "";
  $("correct-dialog").showModal();
  $("correct-code").focus();
  $("correct-code").select();
}
$("btn-correct").addEventListener("click", openCorrect);
$("correct-cancel").addEventListener("click", () => $("correct-dialog").close());
$("correct-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (!selected) { $("correct-error").textContent = "click a card in the camera view first"; return; }
  const body = { zone: selected.zone, column: selected.column, row: selected.row, code: $("correct-code").value };
  api("/api/correct", { method: "POST", body: JSON.stringify(body) })
    .then((r) => { $("correct-dialog").close(); selected = null; say(""); if (r.state) render(r.state); })
    .catch((e) => { $("correct-error").textContent = e.message; });
});

// ---- set-up -----------------------------------------------------------------------------
let options = null;
function playerRow(kind, name) {
  const li = el("li");
  const input = el("input", { value: name, "aria-label": "player name" });
  const sel = el("select", { "aria-label": "player kind" });
  for (const k of ["human", "virtual"]) { const o = el("option", { value: k }, k); if (k === kind) o.selected = true; sel.append(o); }
  const rm = el("button", { type: "button" }, "×");
  rm.addEventListener("click", () => { li.remove(); refreshHelpers(); });
  sel.addEventListener("change", refreshHelpers);
  li.append(input, sel, rm);
  return li;
}
function setupConfig() {
  const players = [...$("setup-players").children].map((li) => ({
    name: li.querySelector("input").value, kind: li.querySelector("select").value }));
  const helper = {};
  for (const row of $("helper-table").tBodies[0].rows) helper[row.dataset.role] = row.querySelector("input").value;
  return { game: $("setup-game").value, players, helper_deck: helper };
}
function refreshHelpers() {
  if (!options) return;
  const cfg = setupConfig();
  api("/api/setup/helpers", { method: "POST", body: JSON.stringify(cfg) })
    .then((r) => fillHelpers(r.helpers))
    .catch((e) => { $("setup-error").textContent = e.message; });
}
function fillHelpers(helpers) {
  const body = $("helper-table").tBodies[0];
  body.replaceChildren(...helpers.map((h) => {
    const tr = el("tr", { "data-role": h.role });
    tr.append(el("td", {}, h.label));
    const td = el("td"); td.append(el("input", { value: h.face, size: 4 })); tr.append(td);
    tr.append(el("td", {}, String(h.copies)));
    tr.querySelector("input").addEventListener("change", refreshHelpers);
    return tr;
  }));
}
$("open-setup").addEventListener("click", () => {
  api("/api/setup").then((o) => {
    options = o;
    $("setup-game").replaceChildren(...o.games.map((g) => el("option", { value: g }, g)));
    $("setup-players").replaceChildren(...o.config.players.map((p) => playerRow(p.kind, p.name)));
    fillHelpers(o.helpers);
    $("setup-error").textContent = "";
    $("setup-dialog").showModal();
  }).catch((e) => say(e.message));
});
$("add-human").addEventListener("click", () => { $("setup-players").append(playerRow("human", `Player ${$("setup-players").children.length + 1}`)); refreshHelpers(); });
$("add-virtual").addEventListener("click", () => { $("setup-players").append(playerRow("virtual", `Virtual ${$("setup-players").children.length + 1}`)); refreshHelpers(); });
$("setup-cancel").addEventListener("click", () => $("setup-dialog").close());
$("setup-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  api("/api/setup", { method: "POST", body: JSON.stringify(setupConfig()) })
    .then((r) => { $("setup-dialog").close(); say(r.message || "new game set up"); if (r.state) render(r.state); })
    .catch((e) => { $("setup-error").textContent = e.message; });
});

window.addEventListener("resize", () => view && renderDiagram(view.instruction));
connect();
