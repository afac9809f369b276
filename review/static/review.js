// The task page of `wac review`: keyboard play in a live world, verdicts, the auditor's context,
// self-check evidence.  Plain JS, no build step.  Every write sends the X-Wac-Review header
// (the server refuses writes without it) and rides on the HttpOnly sign-in cookie.
"use strict";

const page = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const WRITE = { "Content-Type": "application/json", "X-Wac-Review": "1" };

// key -> action (Shift gives the larger step); the page's legend lists the same table
const KEYS = {
  w: ["move", { distance_m: 0.5, direction: "forward" }, { distance_m: 2, direction: "forward" }],
  ArrowUp: ["move", { distance_m: 0.5, direction: "forward" }, { distance_m: 2, direction: "forward" }],
  s: ["move", { distance_m: 0.5, direction: "back" }, { distance_m: 2, direction: "back" }],
  ArrowDown: ["move", { distance_m: 0.5, direction: "back" }, { distance_m: 2, direction: "back" }],
  a: ["turn", { degrees: -15 }, { degrees: -45 }],
  ArrowLeft: ["turn", { degrees: -15 }, { degrees: -45 }],
  d: ["turn", { degrees: 15 }, { degrees: 45 }],
  ArrowRight: ["turn", { degrees: 15 }, { degrees: 45 }],
  r: ["look", { degrees: -10 }, { degrees: -30 }],
  f: ["look", { degrees: 10 }, { degrees: 30 }],
  e: ["interact", {}, {}],
  " ": ["interact", {}, {}],
  t: ["wait", { seconds: 1 }, { seconds: 5 }],
};

const play = { id: null, state: null, busy: false, queued: null, blob: null, seq: 0, pressedAt: null };
window.wacLatency = []; // key press -> new frame shown, ms (read by bench/bench_review.py)
window.wacServer = []; // the server's share of each: simulated step and JPEG encoding, ms
const flagged = [];

// --- time on task ------------------------------------------------------------------------
let seconds = 0;
setInterval(() => {
  if (document.visibilityState === "visible") {
    seconds += 1;
    $("timer").textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }
}, 1000);

// --- play ------------------------------------------------------------------------------------
async function send(url, body) {
  const resp = await fetch(url, { method: "POST", headers: WRITE, body: JSON.stringify(body || {}) });
  if (!resp.ok) {
    let msg = `${resp.status}`;
    try { msg = (await resp.json()).error || msg; } catch (_) { /* not JSON */ }
    const err = new Error(msg);
    err.status = resp.status;
    throw err;
  }
  return resp;
}

async function showFrame(resp) {
  const state = JSON.parse(resp.headers.get("X-Wac-State"));
  const blob = await resp.blob();
  const img = $("frame");
  const url = URL.createObjectURL(blob);
  await new Promise((ok) => { img.onload = ok; img.onerror = ok; img.src = url; });
  if (play.blob) URL.revokeObjectURL(play.blob.url);
  play.blob = { url, blob };
  play.id = state.play;
  play.state = state;
  play.seq += 1;
  img.dataset.seq = String(play.seq);
  img.dataset.step = String(state.step);
  img.dataset.variant = state.variant;
  if (play.pressedAt !== null) {
    window.wacLatency.push(performance.now() - play.pressedAt);
    window.wacServer.push({ step_ms: state.step_ms, jpeg_ms: state.jpeg_ms });
    play.pressedAt = null;
  }
  $("budget").textContent = `${state.step} of ${state.budget} actions used · ${state.budget_left} left`;
  $("budget").classList.toggle("spent", state.budget_left <= 0);
  const p = state.pose;
  $("pose").textContent = `x ${p.x.toFixed(2)} y ${p.y.toFixed(2)} · yaw ${p.yaw_deg.toFixed(0)}° pitch ${p.pitch_deg.toFixed(0)}°`;
  $("simtime").textContent = `t = ${state.sim_time.toFixed(1)} s`;
  $("outcome").textContent = (state.action ? `${state.ref}: ${state.action} → ` : `${state.ref}: `) + state.outcome;
  $("outcome").classList.toggle("error", !state.ok);
  document.querySelectorAll(".variants button").forEach((b) => b.classList.toggle("on", b.dataset.variant === state.variant));
  hideWait();
}

async function run(op) {
  // one request at a time; the newest key press waits for the one in flight, older ones are dropped
  if (play.busy) { play.queued = op; return; }
  play.busy = true;
  try {
    await showFrame(await op());
  } catch (err) {
    hideWait();
    $("outcome").textContent = `error: ${err.message}`;
    $("outcome").classList.add("error");
    play.pressedAt = null;
    if (err.status === 404 && play.id) {
      // the server closed this world (idle, or too many open): start a fresh one
      $("outcome").textContent += " — starting a new world";
      play.id = null;
      play.queued = () => send("/api/play", { task_id: page.task_id, variant: (play.state || {}).variant || "perturbed" });
    }
  } finally {
    play.busy = false;
    const next = play.queued;
    play.queued = null;
    if (next) run(next);
  }
}

// the wait note counts the seconds, so a slow first world is visibly under way
let waitTimer = null;
function showWait(text) {
  const note = $("frame-wait");
  const t0 = performance.now();
  note.textContent = text;
  note.hidden = false;
  clearInterval(waitTimer);
  waitTimer = setInterval(() => { note.textContent = `${text} ${Math.round((performance.now() - t0) / 1000)} s`; }, 1000);
}
function hideWait() {
  clearInterval(waitTimer);
  $("frame-wait").hidden = true;
}

function start(variant) {
  showWait("starting the world…");
  run(() => send("/api/play", { task_id: page.task_id, variant }));
}

function act(action) {
  if (!play.id) return;
  run(() => send(`/api/play/${play.id}/act`, action));
}

function switchVariant(variant) {
  if (!play.id) return start(variant);
  if (play.state && play.state.variant === variant) return;
  showWait(`starting the ${variant} world…`);
  run(() => send(`/api/play/${play.id}/variant`, { variant }));
}

document.addEventListener("keydown", (ev) => {
  const tag = (ev.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "textarea" || tag === "select" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (!$("lightbox").hidden) { if (ev.key === "Escape") $("lightbox").hidden = true; return; }
  const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
  const spec = KEYS[key];
  if (spec) {
    ev.preventDefault();
    play.pressedAt = performance.now();
    act({ action: spec[0], ...(ev.shiftKey ? spec[2] : spec[1]) });
  } else if (key === "c") {
    switchVariant(play.state && play.state.variant === "clean" ? "perturbed" : "clean");
  } else if (key === "b") {
    flagFrame();
  } else if (key === "0" && play.id) {
    run(() => send(`/api/play/${play.id}/reset`));
  }
});

document.querySelectorAll(".variants button").forEach((b) => b.addEventListener("click", () => switchVariant(b.dataset.variant)));
$("action-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("action-text").value.trim();
  if (text) { play.pressedAt = performance.now(); act({ text }); $("action-text").value = ""; }
});
$("reset").addEventListener("click", () => play.id && run(() => send(`/api/play/${play.id}/reset`)));
$("flag-frame").addEventListener("click", () => flagFrame());

// --- flagged frames ------------------------------------------------------------------------
function flagFrame() {
  if (!play.blob || !play.state || flagged.length >= 12) return;
  const s = play.state;
  const reader = new FileReader();
  reader.onload = () => {
    flagged.push({
      label: `${s.ref}${s.action ? ` (${s.action})` : ""}`,
      meta: { variant: s.variant, step: s.step, pose: s.pose, sim_time: s.sim_time, actions: s.actions },
      image: reader.result,
    });
    drawFlagged();
  };
  reader.readAsDataURL(play.blob.blob);
}

function drawFlagged() {
  const box = $("flagged");
  box.replaceChildren();
  flagged.forEach((f, i) => {
    const fig = document.createElement("figure");
    const img = document.createElement("img");
    img.src = f.image; img.className = "zoomable"; img.alt = f.label; img.dataset.caption = f.label;
    const cap = document.createElement("figcaption");
    cap.textContent = f.label + " ";
    const rm = document.createElement("button");
    rm.type = "button"; rm.textContent = "×"; rm.title = "remove";
    rm.addEventListener("click", () => { flagged.splice(i, 1); drawFlagged(); });
    cap.appendChild(rm);
    fig.append(img, cap);
    box.appendChild(fig);
  });
}

// --- verdict -------------------------------------------------------------------------------
function verdictItem(v, stale) {
  const li = document.createElement("li");
  li.className = v.verdict;
  const b = document.createElement("b");
  b.textContent = v.reviewer;
  li.append(b, `: ${v.verdict.replace("_", " ")}`);
  if (stale) {
    li.append(` on version ${v.version_id} `);
    const s = document.createElement("span"); s.className = "stale"; s.textContent = "stale"; li.append(s);
  }
  if (v.comment) li.append(` — ${v.comment}`);
  const spent = Math.round(v.seconds_spent);
  li.append(` · ${v.when}, ${Math.floor(spent / 60)}:${String(spent % 60).padStart(2, "0")} spent`);
  v.flagged.forEach((f) => {
    const img = document.createElement("img");
    img.src = `/api/flagged/${f.id}`; img.className = "thumb zoomable"; img.alt = f.label; img.dataset.caption = f.label;
    li.append(" ", img);
  });
  return li;
}

function drawVerdicts(t) {
  const status = $("task-status");
  status.textContent = t.status.replace("_", " ");
  status.className = `status ${t.status}`;
  const cur = $("current-verdicts");
  cur.replaceChildren(...(t.current.length ? t.current.map((v) => verdictItem(v, false)) : [Object.assign(document.createElement("li"), { className: "none", textContent: "none yet" })]));
  const old = $("stale-verdicts");
  old.replaceChildren(...(t.stale_verdicts.length ? t.stale_verdicts.map((v) => verdictItem(v, true)) : [Object.assign(document.createElement("li"), { className: "none", textContent: "none" })]));
}

$("verdict-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  const verdict = (form.querySelector("input[name=verdict]:checked") || {}).value;
  const msg = $("verdict-msg");
  try {
    const resp = await send(`/api/task/${page.task_id}/verdict`, {
      version_id: page.version_id, verdict, comment: $("comment").value, seconds_spent: seconds, flagged,
    });
    const t = await resp.json();
    drawVerdicts(t);
    msg.textContent = `recorded: ${verdict.replace("_", " ")}`;
    msg.className = "ok";
    seconds = 0;
    flagged.length = 0;
    drawFlagged();
  } catch (err) {
    msg.textContent = `not recorded: ${err.message}`;
    msg.className = "error";
  }
});
fetch(`/api/task/${page.task_id}`).then((r) => r.json()).then(drawVerdicts).catch(() => {});

// --- the auditor's context, start view, evidence ---------------------------------------------
function figure(src, caption, extra) {
  const fig = document.createElement("figure");
  if (extra) fig.className = extra;
  const img = document.createElement("img");
  img.src = src; img.alt = caption; img.className = "zoomable"; img.dataset.caption = caption; img.loading = "lazy";
  const cap = document.createElement("figcaption");
  cap.textContent = caption;
  fig.append(img, cap);
  return fig;
}

function compare(src, caption) {
  // clean | perturbed side by side in one PNG: a slider reveals one over the other
  const fig = document.createElement("figure");
  fig.className = "compare";
  const box = document.createElement("div");
  box.className = "slider";
  const clean = document.createElement("div");
  clean.className = "half clean";
  const pert = document.createElement("div");
  pert.className = "half perturbed";
  [clean, pert].forEach((d) => { d.style.backgroundImage = `url("${src}")`; });
  const range = document.createElement("input");
  range.type = "range"; range.min = 0; range.max = 100; range.value = 50; range.setAttribute("aria-label", "clean ⇄ perturbed");
  const setCut = () => { pert.style.clipPath = `inset(0 0 0 ${range.value}%)`; };
  range.addEventListener("input", setCut);
  setCut();
  box.append(clean, pert);
  const full = document.createElement("img");
  full.src = src; full.className = "zoomable sbs"; full.alt = caption; full.dataset.caption = `${caption} (left clean, right perturbed)`;
  full.addEventListener("load", () => {
    // the pair has an 8 px gutter (runtime.commands.side_by_side): size each half to one frame
    const w = (full.naturalWidth - 8) / 2;
    [clean, pert].forEach((d) => { d.style.backgroundSize = `${(100 * full.naturalWidth) / w}% 100%`; });
    box.style.aspectRatio = `${w} / ${full.naturalHeight}`;
  });
  const cap = document.createElement("figcaption");
  cap.textContent = `${caption} — slider: clean (left) ⇄ perturbed (right); click the pair below for full size`;
  fig.append(box, range, cap, full);
  return fig;
}

async function loadArtifacts() {
  let a;
  try {
    a = await (await fetch(`/api/task/${page.task_id}/artifacts`)).json();
  } catch (_) {
    return setTimeout(loadArtifacts, 2000);
  }
  if (a.state === "pending") return setTimeout(loadArtifacts, 1500);
  const ctx = $("context-body"), startBox = $("start-body"), ev = $("evidence-body");
  [ctx, startBox, ev].forEach((e) => { e.classList.remove("pending"); e.replaceChildren(); });
  if (a.state === "failed") {
    ctx.textContent = `could not render: ${a.error}`;
    ctx.classList.add("error");
    return;
  }
  const base = `/api/task/${page.task_id}/file/${a.version_id}`;
  const pre = document.createElement("pre");
  pre.textContent = a.context.text;
  ctx.appendChild(pre);
  const figs = document.createElement("div");
  figs.className = "figures";
  a.context.images.forEach((im) => figs.appendChild(figure(`${base}/${im.file}`, im.caption)));
  ctx.appendChild(figs);
  const a0 = a.context.images.find((im) => im.ref === "a0");
  if (a0) startBox.appendChild(figure(`${base}/${a0.file}`, a0.caption, "start"));
  const sc = a.selfcheck;
  const head = document.createElement("p");
  head.className = sc.passed ? "ok" : "error";
  head.textContent = `self-check ${sc.passed ? "passed" : "FAILED"} · ${sc.actions_needed} of ${sc.budget} actions: ${sc.actions}`;
  ev.appendChild(head);
  (sc.reasons || []).forEach((r) => { const p = document.createElement("p"); p.className = "error"; p.textContent = r; ev.appendChild(p); });
  a.evidence.forEach((f) => ev.appendChild(compare(`${base}/evidence/${f.file}`, `step ${f.step} · t=${f.sim_time.toFixed(1)} s · ${f.caption || f.file}`)));
}

// --- full size on click ------------------------------------------------------------------------
document.addEventListener("click", (ev) => {
  const img = ev.target.closest && ev.target.closest("img.zoomable, #frame");
  const box = $("lightbox");
  if (img) {
    box.querySelector("img").src = img.src;
    box.querySelector(".caption").textContent = img.dataset.caption || (play.state ? play.state.ref : "");
    box.hidden = false;
  } else if (!box.hidden && ev.target.closest("#lightbox")) {
    box.hidden = true;
  }
});

// leaving the page frees its world at once (the server would close it when idle anyway)
window.addEventListener("pagehide", () => {
  if (play.id) fetch(`/api/play/${play.id}/close`, { method: "POST", headers: WRITE, body: "{}", keepalive: true });
});

start("perturbed");
loadArtifacts();
