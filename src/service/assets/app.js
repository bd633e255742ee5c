// The ggp-asp service page. Every text that comes from a game or an answer
// is put into the page with textContent (through el()), never as markup.
"use strict";

// The game last written or chosen on the Solve view, for the encoding and
// report views.
let currentGame = sessionStorage.getItem("game") || "";
let timer = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick" || k === "onchange" || k === "oninput") e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function show(...nodes) {
  const main = document.getElementById("main");
  main.replaceChildren(...nodes);
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch("/api" + path, opts);
  let data = null;
  try { data = await r.json(); } catch (_) { data = { error: "the reply is not JSON (HTTP " + r.status + ")" }; }
  return { status: r.status, data };
}

function errorBox(data) {
  const box = el("div", { class: "error", "data-testid": "error" }, data.error || "error");
  for (const d of data.diagnostics || []) {
    box.appendChild(el("div", {}, "line " + d.line + ", column " + d.column + ": " + d.message));
  }
  return box;
}

function statusSpan(s) {
  return el("span", { class: "status-" + s, "data-testid": "job-status" }, s);
}

function provenWords(a) {
  if (!a) return "";
  if (a.proven === "shortest") return "proven shortest";
  if (a.proven === "best-goal") return "proven best goal";
  return "not proven";
}

// ---- Solve

async function viewSolve() {
  const area = el("textarea", { id: "game", "data-testid": "game", spellcheck: "false", placeholder: "(role player) ..." });
  area.value = currentGame;
  area.addEventListener("input", () => { currentGame = area.value; sessionStorage.setItem("game", currentGame); });
  const pick = el("select", { id: "puzzle", "data-testid": "puzzle" }, el("option", { value: "" }, "a bundled puzzle..."));
  const upload = el("input", { type: "file", accept: ".kif,.gdl,.txt", "data-testid": "upload" });
  const timeout = el("input", { type: "number", min: "1", value: "60", size: "5", "data-testid": "timeout" });
  const mode = el("select", { "data-testid": "mode" },
    ...["auto", "full", "incremental", "search", "breadth", "parallel"].map(m => el("option", { value: m }, m)));
  const first = el("input", { type: "checkbox", "data-testid": "first" });
  const out = el("div", {});
  const setGame = text => { area.value = text; currentGame = text; sessionStorage.setItem("game", text); };
  let puzzles = [];
  fetch("/ui/puzzles").then(r => r.json()).then(d => {
    puzzles = d.puzzles;
    for (const p of puzzles) pick.appendChild(el("option", { value: p.name }, p.name));
  });
  pick.addEventListener("change", () => {
    const p = puzzles.find(p => p.name === pick.value);
    if (p) setGame(p.game);
  });
  upload.addEventListener("change", async () => {
    if (upload.files.length) setGame(await upload.files[0].text());
  });
  const submit = el("button", { "data-testid": "submit", onclick: async () => {
    out.replaceChildren(el("span", { class: "muted" }, "submitting..."));
    const body = { game: area.value, timeout: Number(timeout.value) || 60, mode: mode.value, first: first.checked };
    if (pick.value) body.name = pick.value;
    const r = await api("POST", "/solve", body);
    if (r.status === 202) location.hash = "#/job/" + r.data.id;
    else if (r.status === 200) location.hash = "#/game/" + r.data.fingerprint;
    else out.replaceChildren(errorBox(r.data));
  } }, "Solve");
  show(
    el("h2", {}, "Solve a single-player game"),
    el("div", { class: "row" }, pick, el("label", {}, "or a file: ", upload)),
    area,
    el("div", { class: "row" },
      el("label", {}, "timeout (s) ", timeout),
      el("label", {}, "mode ", mode),
      el("label", {}, first, " first plan, no proof"),
      submit,
      el("button", { "data-testid": "encode", onclick: () => { location.hash = "#/encode"; } }, "Encoding"),
      el("button", { "data-testid": "inspect", onclick: () => { location.hash = "#/inspect"; } }, "Grounding report")),
    out);
}

// ---- Boards along a plan

function gridTable(grid) {
  const t = el("table", { class: "board", "data-testid": "board" });
  if (grid.columns.length) {
    t.appendChild(el("tr", {}, el("th", {}), ...grid.columns.map(c => el("th", {}, c))));
  }
  grid.rows.forEach(([label, cells], ri) => {
    const tr = el("tr", {});
    if (grid.block && (ri + 1) % grid.block[0] === 0 && ri + 1 < grid.rows.length) tr.className = "block-bottom";
    if (grid.columns.length) tr.appendChild(el("th", {}, label));
    cells.forEach((c, ci) => {
      const td = el("td", { class: c === null ? "empty" : null }, c === null ? "." : c);
      if (grid.block && (ci + 1) % grid.block[1] === 0 && ci + 1 < cells.length) td.classList.add("block-right");
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
  return t;
}

function boardStepper(boards) {
  const steps = boards.steps;
  let i = 0;
  const label = el("span", { "data-testid": "step" });
  const slider = el("input", { type: "range", min: "0", max: String(steps.length - 1), value: "0" });
  const area = el("div", {});
  const draw = () => {
    const s = steps[i];
    slider.value = String(i);
    label.textContent = "step " + s.step + " of " + (steps.length - 1) + (s.move ? " after " + s.move : " (initial state)");
    const parts = [];
    if (s.grid) {
      parts.push(gridTable(s.grid));
      if (s.grid.others.length) parts.push(el("div", { class: "fluents" }, ...s.grid.others.map(f => el("div", {}, f))));
    } else {
      parts.push(el("div", { class: "fluents", "data-testid": "fluents" }, ...s.fluents.map(f => el("div", {}, f))));
    }
    area.replaceChildren(...parts);
  };
  slider.addEventListener("input", () => { i = Number(slider.value); draw(); });
  const prev = el("button", { "data-testid": "prev", onclick: () => { if (i > 0) { i--; draw(); } } }, "◀ previous");
  const next = el("button", { "data-testid": "next", onclick: () => { if (i < steps.length - 1) { i++; draw(); } } }, "next ▶");
  const last = el("button", { "data-testid": "last", onclick: () => { i = steps.length - 1; draw(); } }, "goal ▶|");
  draw();
  return el("div", {}, el("div", { class: "row" }, prev, next, last, slider, label),
    boards.note ? el("div", { class: "error" }, boards.note) : null, area);
}

function answerSummary(a) {
  if (!a) return null;
  const rows = [
    ["status", a.status], ["moves", a.steps ?? "-"], ["goal", a.goal ?? "-"],
    ["proven", provenWords(a)], ["horizon searched", a.horizon], ["lower bound", a.lower_bound ?? "-"],
    ["by", a.mode || "-"], ["source", a.source], ["time", (a.total_s || 0).toFixed(2) + " s"],
  ];
  return el("div", {},
    el("table", { class: "list", "data-testid": "answer" }, ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))),
    a.message ? el("p", { "data-testid": "message" }, a.message) : null,
    a.plan && a.plan.length ? el("pre", { "data-testid": "plan" }, a.plan.map((m, i) => (i + 1) + ". " + m).join("\n")) : null);
}

// ---- A job

async function viewJob(id) {
  const r = await api("GET", "/solve/" + encodeURIComponent(id));
  if (r.status !== 200) { show(errorBox(r.data)); return; }
  const job = r.data;
  const parts = [
    el("h2", {}, "Job ", el("span", { class: "mono" }, job.id), job.name ? " — " + job.name : ""),
    el("p", {}, statusSpan(job.status), " · timeout " + job.timeout + " s · created " + job.created,
      job.finished ? " · finished " + job.finished : ""),
  ];
  if (!["solved", "no-plan", "timeout", "error", "cancelled"].includes(job.status)) {
    parts.push(el("button", { "data-testid": "cancel", onclick: async () => {
      await api("DELETE", "/solve/" + encodeURIComponent(id));
      route();
    } }, "Cancel"));
    timer = setTimeout(route, 1000);
  }
  if (job.error) parts.push(el("p", { class: "error" }, job.error));
  parts.push(answerSummary(job.answer));
  const boardsBox = el("div", {});
  parts.push(boardsBox);
  parts.push(el("h3", {}, "Progress"), el("pre", { "data-testid": "progress" }, job.progress.join("\n")));
  show(...parts);
  if (job.answer && job.answer.plan && job.answer.plan.length) {
    const b = await api("GET", "/solve/" + encodeURIComponent(id) + "/boards");
    if (b.status === 200) boardsBox.replaceChildren(el("h3", {}, "The plan, step by step"), boardStepper(b.data));
  }
}

// ---- The store

async function viewStore() {
  const r = await api("GET", "/games");
  if (r.status !== 200) { show(el("h2", {}, "Plan store"), errorBox(r.data)); return; }
  const rows = r.data.games.map(g => el("tr", {},
    el("td", {}, el("a", { href: "#/game/" + g.fingerprint }, g.name)),
    el("td", {}, g.outcome), el("td", {}, g.steps ?? "-"), el("td", {}, g.goal ?? "-"),
    el("td", {}, g.proven), el("td", {}, g.lower_bound ?? "-"), el("td", {}, g.seconds.toFixed(1) + " s"),
    el("td", {}, g.solved_at)));
  show(el("h2", {}, "Plan store (" + r.data.games.length + " games)"),
    el("table", { class: "list", "data-testid": "store" },
      el("tr", {}, ...["game", "outcome", "moves", "goal", "proven", "bound", "solving", "when"].map(h => el("th", {}, h))),
      ...rows));
}

async function viewGame(fp) {
  const r = await api("GET", "/games/" + encodeURIComponent(fp));
  if (r.status !== 200) { show(errorBox(r.data)); return; }
  const g = r.data;
  const boardsBox = el("div", {});
  show(el("h2", {}, "Stored: " + g.name),
    el("p", { class: "mono muted" }, g.fingerprint),
    answerSummary({ status: g.outcome, steps: g.steps, goal: g.goal, proven: g.proven, horizon: g.horizon,
      lower_bound: g.lower_bound, mode: g.solver, source: "store", total_s: g.seconds, plan: g.plan,
      message: "solved " + g.solved_at }),
    boardsBox,
    el("h3", {}, "Rules (in the names first seen)"), el("pre", {}, g.rules));
  if (g.plan.length) {
    const b = await api("GET", "/games/" + encodeURIComponent(fp) + "/boards");
    if (b.status === 200) boardsBox.replaceChildren(el("h3", {}, "The plan, step by step"), boardStepper(b.data));
  }
}

async function viewJobs() {
  const r = await api("GET", "/solve");
  if (r.status !== 200) { show(errorBox(r.data)); return; }
  show(el("h2", {}, "Jobs"),
    el("table", { class: "list", "data-testid": "jobs" },
      el("tr", {}, ...["job", "game", "status", "moves", "proven", "created"].map(h => el("th", {}, h))),
      ...r.data.jobs.map(j => el("tr", {},
        el("td", {}, el("a", { href: "#/job/" + j.id, class: "mono" }, j.id)),
        el("td", {}, j.name || "-"), el("td", {}, statusSpan(j.status)),
        el("td", {}, j.answer ? (j.answer.steps ?? "-") : "-"),
        el("td", {}, j.answer ? provenWords(j.answer) : "-"), el("td", {}, j.created)))));
  timer = setTimeout(route, 3000);
}

// ---- Encoding and grounding report of the current game

async function viewEncode() {
  show(el("h2", {}, "Encoding"), el("p", { class: "muted" }, "encoding..."));
  const r = await api("POST", "/encode", { game: currentGame });
  if (r.status !== 200) { show(el("h2", {}, "Encoding"), errorBox(r.data)); return; }
  const rows = r.data.pairs.map(p => el("tr", {},
    el("td", { class: p.gdl ? "gdl" : "" }, p.gdl), el("td", {}, p.asp)));
  show(el("h2", {}, "Encoding (incremental form): each GDL rule beside the ASP it became"),
    ...r.data.notes.map(n => el("p", { class: "muted" }, n)),
    el("table", { class: "pairs", "data-testid": "pairs" },
      el("tr", {}, el("th", {}, "GDL"), el("th", {}, "ASP")), ...rows),
    el("h3", {}, "The whole program"), el("pre", { "data-testid": "program" }, r.data.program));
}

async function viewInspect() {
  show(el("h2", {}, "Grounding report"), el("p", { class: "muted" }, "grounding..."));
  const r = await api("POST", "/inspect", { game: currentGame });
  if (r.status !== 200) { show(el("h2", {}, "Grounding report"), errorBox(r.data)); return; }
  const g = r.data.grounding;
  show(el("h2", {}, "Grounding report"),
    el("p", {}, "roles: " + r.data.roles.join(", ") + " · " + r.data.rules + " rules · fingerprint ",
      el("span", { class: "mono" }, r.data.fingerprint)),
    el("p", { "data-testid": "grounding" }, (g.complete ? "grounding complete: " : "grounding stopped (" + g.stopped + "): ") +
      g.atoms + " ground atoms, " + g.rule_instances + " rule instances, " + g.memory_mib.toFixed(1) + " MiB"),
    el("table", { class: "list" }, el("tr", {}, el("th", {}, "relation"), el("th", {}, "atoms"), el("th", {}, "rule instances")),
      ...g.largest.map(x => el("tr", {}, el("td", { class: "mono" }, x.relation), el("td", {}, x.atoms), el("td", {}, x.rules)))));
}

// ---- Matches

async function viewMatches() {
  const r = await api("GET", "/matches");
  show(el("h2", {}, "Matches"),
    r.data.matches.length === 0 ? el("p", { class: "muted" }, "no match yet") :
    el("table", { class: "list", "data-testid": "matches" },
      el("tr", {}, ...["match", "role", "state", "step", "clocks", "engine"].map(h => el("th", {}, h))),
      ...r.data.matches.map(m => el("tr", {},
        el("td", {}, el("a", { href: "#/match/" + encodeURIComponent(m.id) }, m.id)), el("td", {}, m.role),
        el("td", {}, m.state), el("td", {}, m.step), el("td", {}, m.start_clock_s + " s / " + m.play_clock_s + " s"),
        el("td", {}, m.engine)))));
  timer = setTimeout(route, 2000);
}

async function viewMatch(id) {
  const r = await api("GET", "/matches/" + encodeURIComponent(id));
  if (r.status !== 200) { show(errorBox(r.data)); return; }
  const m = r.data;
  show(el("h2", {}, "Match " + m.id),
    el("table", { class: "list", "data-testid": "match" },
      ...[["role", m.role + " (of " + m.roles + ")"], ["state", m.state], ["step", m.step],
        ["start clock", m.start_clock_s + " s"], ["play clock", m.play_clock_s + " s"], ["engine", m.engine],
        ["solver", m.solver || "-"], ["goals", m.goals || "-"], ["started", m.started]]
        .map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))),
    el("h3", {}, "Our last moves"),
    el("table", { class: "list" },
      el("tr", {}, ...["step", "move", "by", "visits", "value", "playouts", "time"].map(h => el("th", {}, h))),
      ...[...m.moves].reverse().map(x => el("tr", {}, el("td", {}, x.step), el("td", { class: "mono" }, x.move),
        el("td", {}, x.by), el("td", {}, x.visits), el("td", {}, x.value === null ? "-" : x.value.toFixed(1)),
        el("td", {}, x.playouts), el("td", {}, x.seconds.toFixed(2) + " s")))));
  if (m.state === "playing" || m.state === "starting") timer = setTimeout(route, 1000);
}

// ---- Routing

async function refreshStatus() {
  const r = await api("GET", "/status").catch(() => null);
  if (!r || r.status !== 200) return;
  const s = r.data;
  document.getElementById("status").textContent =
    s.running + " running, " + s.queued + " queued (" + s.slots + " slots) · " + s.matches + " matches · store " + (s.store || "off");
}

function route() {
  if (timer) { clearTimeout(timer); timer = null; }
  const h = location.hash.replace(/^#\/?/, "");
  const [view, ...rest] = h.split("/");
  const arg = decodeURIComponent(rest.join("/"));
  refreshStatus();
  const views = {
    "": viewSolve, "job": () => viewJob(arg), "jobs": viewJobs, "store": viewStore, "game": () => viewGame(arg),
    "encode": viewEncode, "inspect": viewInspect, "matches": viewMatches, "match": () => viewMatch(arg),
  };
  (views[view] || viewSolve)().catch(e => show(el("p", { class: "error" }, String(e))));
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);
