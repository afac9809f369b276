// The auditing page of `wac human`: the participant's AuditSession driven by tool forms and keys.
// Plain JS, no build step.  Every write sends the X-Wac-Human header (the server refuses writes
// without it) and rides on the HttpOnly sign-in cookie.  The page shows only what the server's
// session answers: the opening observe (the auditor's context), tool results and frames by ref.
"use strict";

const page = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const WRITE = { "Content-Type": "application/json", "X-Wac-Human": "1" };
const base = `/api/a/${page.assignment}`;
const DEFAULTS = { move: { distance_m: 1, direction: "forward" }, turn: { degrees: 30 }, look: { degrees: 15 }, wait: { seconds: 2 } };
const clock = { elapsed: 0, limit: 600, at: performance.now(), ended: null };

// key -> [tool, args from the tool's form]; the page's legend lists the same table
const amount = (tool, name) => Math.abs(parseFloat(formArgs(tool)[name] ?? DEFAULTS[tool][name]));
const KEYS = {
  w: () => ["move", { distance_m: amount("move", "distance_m"), direction: "forward" }],
  ArrowUp: () => KEYS.w(),
  s: () => ["move", { distance_m: amount("move", "distance_m"), direction: "back" }],
  ArrowDown: () => KEYS.s(),
  a: () => ["turn", { degrees: -amount("turn", "degrees") }],
  ArrowLeft: () => KEYS.a(),
  d: () => ["turn", { degrees: amount("turn", "degrees") }],
  ArrowRight: () => KEYS.d(),
  r: () => ["look", { degrees: -amount("look", "degrees") }],
  f: () => ["look", { degrees: amount("look", "degrees") }],
  e: () => ["interact", {}],
  t: () => ["wait", { seconds: amount("wait", "seconds") }],
};

async function post(url, body) {
  const resp = await fetch(url, { method: "POST", headers: WRITE, body: JSON.stringify(body || {}) });
  let data = {};
  try { data = await resp.json(); } catch (_) { /* not JSON */ }
  if (!resp.ok) throw new Error(data.error || `${resp.status}`);
  return data;
}

function figure(img, cls) {
  const f = document.createElement("figure");
  if (cls) f.className = cls;
  const i = document.createElement("img");
  i.src = img.url; i.alt = img.caption; i.className = "zoomable"; i.dataset.ref = img.ref;
  const c = document.createElement("figcaption");
  c.textContent = img.caption;
  f.append(i, c);
  return f;
}

function fmt(s) {
  s = Math.max(0, Math.ceil(s));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function showEnded(ended) {
  clock.ended = ended;
  const e = $("ended");
  e.hidden = false;
  e.textContent = ended === "time" ? "time is up: the session ended" : "finished: thank you";
  e.dataset.ended = ended;
  document.querySelectorAll("#tools button").forEach((b) => { b.disabled = true; });
  $("wait").hidden = true;
}

async function showState(state) {
  clock.elapsed = state.elapsed_s; clock.limit = state.limit_s; clock.at = performance.now();
  showClock();
  if (state.budget !== undefined) {
    $("budget").textContent = `${state.used} of ${state.budget} used, ${state.left} left`;
    $("budget").classList.toggle("spent", state.left <= 0);
  }
  if (state.view) {
    const img = $("frame");
    await new Promise((ok) => { img.onload = ok; img.onerror = ok; img.src = state.view; });
    img.dataset.step = String(state.used);
    $("view-caption").textContent = `current view ${state.view_ref}`;
  }
  if (state.ended) showEnded(state.ended);
}

function log(res) {
  const entry = document.createElement("div");
  entry.className = "entry" + (res.error ? " error" : "");
  entry.dataset.seq = res.seq ?? "";
  const pre = document.createElement("pre");
  pre.textContent = `${res.tool}: ${res.text}`;
  entry.append(pre);
  const figs = document.createElement("div");
  figs.className = "figures";
  (res.images || []).forEach((img) => figs.append(figure(img)));
  entry.append(figs);
  $("log").prepend(entry);
}

// calls run one at a time, in order; a few wait their turn (keys pressed during a call), more are dropped
let chain = Promise.resolve();
let waiting = 0;
function call(tool, args) {
  if (clock.ended || waiting >= 3) return chain;
  waiting += 1;
  chain = chain.then(() => { waiting -= 1; return run(tool, args); });
  return chain;
}

async function run(tool, args) {
  if (clock.ended) return;
  $("wait").hidden = false;
  $("wait").textContent = `${tool}…`;
  try {
    const res = await post(`${base}/call`, { tool, args });
    log(res);
    await showState(res.state);
  } catch (err) {
    log({ tool, text: `ERROR: ${err.message}`, error: true });
  } finally {
    if (!clock.ended) $("wait").hidden = true;
  }
}

function formArgs(tool) {
  const form = $(`tool-${tool}`);
  const args = {};
  if (!form) return args;
  form.querySelectorAll("[name]").forEach((el) => {
    const v = el.value.trim();
    if (v === "") return;
    const kind = el.dataset.kind;
    if (kind === "number") args[el.name] = parseFloat(v);
    else if (kind === "integer") args[el.name] = parseInt(v, 10);
    else if (kind === "refs") args[el.name] = v.split(/[\s,]+/).filter(Boolean);
    else if (kind === "numbers") args[el.name] = v.split(/[\s,]+/).filter(Boolean).map(parseFloat);
    else args[el.name] = v;
  });
  return args;
}

function setupForms() {
  for (const [tool, values] of Object.entries(DEFAULTS)) {
    for (const [name, v] of Object.entries(values)) {
      const el = document.querySelector(`#tool-${tool} [name=${name}]`);
      if (el) el.value = v;
    }
  }
  document.querySelectorAll("form.tool").forEach((form) => {
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      call(form.dataset.tool, formArgs(form.dataset.tool));
    });
  });
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    const make = KEYS[ev.key] || KEYS[ev.key.toLowerCase()];
    if (!make || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    ev.preventDefault();
    const [tool, args] = make();
    call(tool, args);
  });
  document.addEventListener("click", (ev) => {
    const img = ev.target.closest("img.zoomable");
    const box = $("lightbox");
    if (img) {
      box.querySelector("img").src = img.src;
      box.querySelector(".caption").textContent = img.alt;
      box.hidden = false;
    } else if (ev.target.closest("#lightbox")) box.hidden = true;
  });
}

async function tick() {
  if (clock.ended) return;
  try {
    const state = await post(`${base}/tick`);
    await showState(state);
  } catch (_) { /* the next tick tries again */ }
}

function showClock() {
  if (clock.ended) return;
  const left = clock.limit - clock.elapsed - (performance.now() - clock.at) / 1000;
  $("clock").textContent = fmt(left);
  $("clock").classList.toggle("low", left < 60);
  if (left <= 0) tick();
}
setInterval(showClock, 1000);
setInterval(tick, 5000);

async function start() {
  setupForms();
  try {
    const data = await post(`${base}/start`);
    if (data.ended) { showEnded(data.ended); return; }
    $("context").textContent = data.context;
    data.images.forEach((img) => $("figures").append(figure(img, img.ref === "a0" ? "start" : "")));
    await showState(data.state);
    $("wait").hidden = true;
    document.body.dataset.ready = "1";
  } catch (err) {
    $("wait").textContent = `could not open the task: ${err.message}`;
  }
}
start();
