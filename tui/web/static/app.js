// zwarm serve's page. Everything that came from an agent or a person is
// put on the page as text (setText, el), never as markup, and shown as
// it is (shown).
"use strict";

const state = { token: "", page: 200, next: "", more: false, loading: false, sessions: new Map(), known: new Map(), runs: new Map(), order: [], sort: "updated_at", desc: true, runSort: "created_at", runDesc: true, selected: "", run: "", story: null, canAct: false, told: new Map() };

function token() {
  const m = location.hash.match(/(?:^#|&)token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("zwarm-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname); // the token leaves the address bar
  }
  return sessionStorage.getItem("zwarm-token") || "";
}

async function api(path, opts = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + state.token }, opts.body ? { "Content-Type": "application/json" } : {});
  const res = await fetch(path, Object.assign({}, opts, { headers }));
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// shown is text as the page shows it: the characters that would make it
// display as something it is not (controls, the bidirectional overrides
// and isolates that reorder what follows them, and the spaces and
// separators that show as nothing) are written escaped, \x1b or \u202e,
// as zwarm shows them on a terminal. Newlines and tabs stay.
const unshowable = /[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/gu;
function shown(text) {
  return String(text).replace(unshowable, (c) => {
    const n = c.codePointAt(0);
    if (n < 0x100) return "\\x" + n.toString(16).padStart(2, "0");
    return n > 0xffff ? "\\U" + n.toString(16).padStart(8, "0") : "\\u" + n.toString(16).padStart(4, "0");
  });
}

function setText(node, text) { node.textContent = shown(text); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) setText(e, text);
  if (cls) e.className = cls;
  return e;
}

// loadList reads the first page of sessions again; loadMore the next
// page, as the reader scrolls to the end of the list.
async function loadList() {
  state.gen = (state.gen || 0) + 1; // a page still loading is of the old list
  state.next = "";
  state.sessions = new Map();
  state.loading = false;
  await loadMore();
}

async function loadMore() {
  if (state.loading) return;
  state.loading = true;
  // What the event stream says of a session while the page is read is
  // newer than the page: a session removed meanwhile must not come back
  // with it, nor one changed meanwhile as it was.
  state.told = new Map();
  const gen = state.gen;
  try {
    const q = document.getElementById("filter").value.trim();
    const body = await api("/api/sessions?limit=" + state.page + (state.next ? "&after=" + encodeURIComponent(state.next) : "") + (q ? "&q=" + encodeURIComponent(q) : ""));
    if (gen !== state.gen) return;
    document.getElementById("spawn-form").hidden = !body.can_act;
    for (const s of body.sessions) {
      if (state.told.has(s.id)) continue;
      state.sessions.set(s.id, s);
      state.known.set(s.id, s); // whatever the filter: a run's workers show under it
    }
    // Records that cannot be read, as the pages read so far met them.
    if (!state.next || body.unreadable) setText(document.getElementById("sessions-note"), body.unreadable || "");
    state.next = body.next;
    state.more = body.more;
    document.getElementById("more").hidden = !body.more;
    renderList();
    renderRuns(); // the runs' workers, now known
  } finally {
    if (gen === state.gen) state.loading = false;
  }
  if (gen !== state.gen) return;
  if (state.observer) {
    // Observed anew, the end of the list is reported at once if it is
    // still in view (a short page, a tall window): the next page follows.
    const more = document.getElementById("more");
    state.observer.unobserve(more);
    state.observer.observe(more);
  }
}

// passes says whether a session passes the filter as the server reads
// it (GET /api/sessions?q=): the text in its id, task, model, adapter,
// source or status, whatever the case.
function passes(s) {
  const q = document.getElementById("filter").value.trim().toLowerCase();
  return !q || [s.id, s.task, s.model, s.adapter, s.source, s.status].some((f) => (f || "").toLowerCase().includes(q));
}

function renderList() {
  const rows = [...state.sessions.values()];
  const k = state.sort;
  rows.sort((a, b) => {
    const x = a[k] ?? "", y = b[k] ?? "";
    return (x < y ? -1 : x > y ? 1 : 0) * (state.desc ? -1 : 1);
  });
  const tbody = document.querySelector("#sessions tbody");
  tbody.replaceChildren(...rows.map(row));
}

function row(s) {
  const tr = el("tr");
  tr.dataset.id = s.id;
  if (s.id === state.selected) tr.className = "selected";
  tr.append(el("td", s.short), el("td", s.status, "status-" + s.status), el("td", s.task, "task"), el("td", s.source),
    el("td", s.changes), el("td", s.tokens_text), el("td", s.cost_text), el("td", new Date(s.updated_at).toLocaleTimeString()));
  tr.addEventListener("click", () => select(s.id));
  return tr;
}

async function loadRuns() {
  const body = await api("/api/runs");
  state.runs = new Map(body.runs.map((r) => [r.id, r]));
  setText(document.getElementById("runs-note"), body.unreadable || "");
  renderRuns();
}

// renderRuns lists the runs that pass the filter, sorted as asked, each
// with its workers under it, as the dashboard shows them.
function renderRuns() {
  const q = document.getElementById("filter").value.trim().toLowerCase();
  const k = state.runSort;
  const key = (r) => (k === "workers" ? r.workers.length : r[k] ?? "");
  const list = [...state.runs.values()]
    .filter((r) => !q || [r.id, r.task, r.status, r.model].some((f) => (f || "").toLowerCase().includes(q)))
    .sort((a, b) => {
      const x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (state.runDesc ? -1 : 1);
    });
  const tbody = document.querySelector("#runs tbody");
  tbody.replaceChildren(...list.flatMap((r) => {
    const tr = el("tr");
    tr.dataset.id = r.id;
    if (r.id === state.run) tr.className = "selected";
    tr.append(el("td", r.short), el("td", r.status, "status-" + r.status), el("td", r.task, "task"), el("td", r.steps),
      el("td", r.workers.length), el("td", r.tokens_text), el("td", r.cost_text));
    tr.addEventListener("click", () => selectRun(r.id));
    return [tr, ...r.workers.map((id) => workerRow(id))];
  }));
}

// workerRow is a run's worker under it; it opens the worker's session.
function workerRow(id) {
  const s = state.known.get(id);
  const tr = el("tr", null, "worker" + (id === state.selected ? " selected" : ""));
  tr.dataset.session = id;
  tr.append(el("td", "└ " + id.slice(0, 8)), el("td", s ? s.status : "", s ? "status-" + s.status : ""), el("td", s ? s.task : "", "task"),
    el("td", ""), el("td", ""), el("td", s ? s.tokens_text : ""), el("td", s ? s.cost_text : ""));
  tr.addEventListener("click", () => select(id));
  return tr;
}

async function selectRun(id) {
  state.run = id;
  state.selected = "";
  document.getElementById("detail-pane").hidden = true;
  renderRuns();
  renderList();
  followStory(id);
  await loadRun();
}

// followStory shows run id's story as runs show prints it, line by line as
// the run writes it (each tool call as it is made, not the step once it is
// done); "" stops. A stream that breaks is opened again, with a fresh
// ticket, and starts over.
async function followStory(id) {
  if (state.story) state.story.close();
  state.story = null;
  if (!id) return;
  let ticket;
  try {
    ({ ticket } = await api("/api/stream", { method: "POST", body: "{}" }));
  } catch (e) {
    setTimeout(() => { if (state.run === id && !state.story) followStory(id); }, 3000);
    return;
  }
  if (state.run !== id || state.story) return;
  const es = new EventSource("/api/runs/" + encodeURIComponent(id) + "/story?ticket=" + encodeURIComponent(ticket));
  state.story = es;
  const box = document.getElementById("run-lines");
  es.addEventListener("lines", (e) => {
    const ev = JSON.parse(e.data);
    const rows = ev.lines.map((l) => el("div", "  ".repeat(l.indent) + l.text));
    if (ev.reset) box.replaceChildren(...(ev.skipped ? [el("div", "… earlier steps not shown (zwarm runs show has them)")] : []), ...rows);
    else box.append(...rows);
  });
  es.onerror = () => {
    es.close();
    if (state.story !== es) return;
    state.story = null;
    setTimeout(() => { if (state.run === id && !state.story) followStory(id); }, 1000);
  };
}

// loadRun shows the selected run: its workers (each opens its session), and while it waits, its question with
// an answer button per option.
async function loadRun() {
  const id = state.run;
  if (!id) return;
  const body = await api("/api/runs/" + encodeURIComponent(id));
  if (id !== state.run) return;
  const r = body.run;
  document.getElementById("run-pane").hidden = false;
  setText(document.getElementById("run-title"), "run " + r.short + " · " + r.status);
  setText(document.getElementById("run-task"), r.task);
  document.getElementById("run-workers").replaceChildren(...r.workers.map((w) => {
    const s = state.known.get(w);
    const li = el("li", w.slice(0, 8) + (s ? " · " + s.status + " · " + s.task : ""));
    li.addEventListener("click", () => select(w));
    return li;
  }));
  const q = document.getElementById("run-question");
  q.hidden = !r.question;
  if (r.question) {
    setText(document.getElementById("run-asks"), "asks: " + r.question.text);
    document.getElementById("run-options").replaceChildren(...(r.question.options || []).map((o, i) => {
      const b = el("button", o);
      b.hidden = !body.can_act;
      b.addEventListener("click", () => runAct("answer", String(i + 1)));
      return b;
    }));
  }
  document.getElementById("say-form").hidden = !body.can_act;
}

async function runAct(what, text) {
  const out = document.getElementById("run-result");
  try {
    await api("/api/runs/" + encodeURIComponent(state.run) + "/" + what, { method: "POST", body: JSON.stringify({ text }) });
    out.textContent = what === "say" ? "said" : "answered";
  } catch (e) {
    setText(out, e.message);
  }
}

async function select(id) {
  state.selected = id;
  state.run = "";
  followStory("");
  document.getElementById("run-pane").hidden = true;
  renderRuns();
  renderList();
  await loadDetail();
}

async function loadDetail() {
  const id = state.selected;
  if (!id) return;
  let body;
  try {
    body = await api("/api/sessions/" + encodeURIComponent(id));
  } catch (e) {
    if (id !== state.selected) return;
    // The pane says so, and shows nothing of the session shown before:
    // its buttons would act on this one.
    document.getElementById("detail-pane").hidden = false;
    setText(document.getElementById("detail-title"), id.slice(0, 8) + " · could not be read");
    setText(document.getElementById("detail-meta"), e.message);
    for (const part of ["detail-workspace", "detail-follow-ups", "story"]) document.getElementById(part).replaceChildren();
    document.getElementById("actions").hidden = true;
    return;
  }
  if (id !== state.selected) return;
  const s = body.session;
  state.canAct = body.can_act;
  document.getElementById("detail-pane").hidden = false;
  setText(document.getElementById("detail-title"), s.short + " · " + s.status);
  setText(document.getElementById("detail-meta"), [s.adapter, s.model, s.source, s.tokens_text + " tokens", s.cost_text].filter(Boolean).join(" · "));
  // Where it works and what became of its change, as zwarm show says it.
  document.getElementById("detail-workspace").replaceChildren(...body.workspace.flatMap((f) => [el("dt", f.name), el("dd", f.text)]));
  document.getElementById("detail-follow-ups").replaceChildren(...body.follow_ups.map((f) => {
    const where = f.state === "delivered" ? "delivered as turn " + f.turn : f.state + (f.reason ? ": " + f.reason : "");
    return el("li", "follow-up" + (f.interrupt ? " (interrupt)" : "") + ": " + f.text + " · " + where);
  }));
  document.getElementById("actions").hidden = !body.can_act;
  const story = document.getElementById("story");
  story.replaceChildren(...body.turns.map(turn));
}

function turn(t) {
  const div = el("div", null, "turn");
  div.append(el("h3", "turn " + t.n + " · " + t.status), el("p", t.prompt, "prompt"));
  for (const st of t.steps) {
    const d = el("div", null, "step step-" + st.type);
    if (st.type === "command") {
      d.append(el("code", "$ " + st.command + (st.exit_code !== undefined ? "  → exit " + st.exit_code : "")));
      if (st.output) d.append(el("pre", st.output));
    } else if (st.type === "file_change") {
      d.append(el("span", "files: " + (st.files || []).join(", ")));
    } else if (st.type === "tool_call" || st.type === "tool_result") {
      d.append(el("span", st.type + " " + (st.tool || "") + " " + (st.text || "")));
    } else {
      d.append(el("span", (st.type === "message" ? "» " : st.type + ": ") + (st.text || "")));
    }
    div.append(d);
  }
  return div;
}

// act posts an action; said, if given, words its answer (else "done").
async function act(path, body, said) {
  const out = document.getElementById("action-result");
  out.textContent = "…";
  try {
    const answer = await api(path, { method: "POST", body: JSON.stringify(body || {}) });
    setText(out, said ? said(answer) : "done");
  } catch (e) {
    setText(out, e.message);
  }
}

// killed words a kill's answer: the follow-ups it dropped are said, not
// left for the session's page to show.
function killed(answer) {
  const n = answer.dropped || 0;
  return n === 0 ? "killed" : "killed; " + n + " queued follow-up" + (n === 1 ? "" : "s") + " dropped, undelivered";
}

// land lands the selected session, showing its verify command's output as
// it runs: the answer is JSON lines ({out}, then {landed} or {error}).
async function land() {
  const out = document.getElementById("land-out");
  const result = document.getElementById("action-result");
  out.textContent = "";
  out.hidden = false;
  result.textContent = "landing…";
  const res = await fetch("/api/sessions/" + encodeURIComponent(state.selected) + "/land", {
    method: "POST",
    headers: { Authorization: "Bearer " + state.token, "Content-Type": "application/json" },
    body: JSON.stringify({ verify: document.getElementById("land-verify").value }),
  });
  if (!res.ok) {
    const body = await res.json().catch(() => ({ error: res.statusText }));
    setText(result, body.error);
    return;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (msg.out !== undefined) out.textContent += shown(msg.out);
      else if (msg.error !== undefined) setText(result, msg.error);
      else if (msg.landed) {
        const l = msg.landed;
        setText(result, l.nothing ? "nothing to land" : l.already ? "landed already" :
          "landed into " + l.into + " as " + l.commit.slice(0, 12) + ": +" + l.added + " -" + l.deleted + " in " + l.files + (l.files === 1 ? " file" : " files") + (l.verified ? ", verified" : ""));
      }
    }
  }
}

// showDiff shows the selected session's change: its --stat summary, then
// each file's patch, a line each, coloured by what it does; a file left
// out of the answer (a large change) loads when it is opened.
async function showDiff() {
  const id = state.selected;
  const body = await api("/api/sessions/" + encodeURIComponent(id) + "/diff");
  setText(document.getElementById("diff-stat"), body.stat || "(no change)");
  const files = document.getElementById("diff-files");
  const list = body.files || [];
  files.replaceChildren(...list.map((f) => {
    const d = el("details", null, "diff-file");
    d.open = !f.more && list.length <= 20;
    d.append(el("summary", f.path + (f.more ? "  (" + f.bytes + " bytes: open to load)" : "")));
    const box = el("div", null, "patch-box");
    if (!f.more) fillPatch(box, f.patch);
    else d.addEventListener("toggle", async () => {
      if (!d.open || box.childElementCount) return;
      const one = await api("/api/sessions/" + encodeURIComponent(id) + "/diff?file=" + encodeURIComponent(f.path));
      fillPatch(box, one.patch);
    });
    d.append(box);
    return d;
  }));
  document.getElementById("diff").hidden = false;
}

// fillPatch shows a file's patch in box: unified, a line each, or side by
// side (the old lines left, the new right, a change's removed and added
// lines paired), as the checkbox says.
function fillPatch(box, patch) {
  box.dataset.patch = patch;
  if (document.getElementById("side-by-side").checked) {
    box.replaceChildren(sideBySide(patch));
    return;
  }
  const pre = el("pre", null, "patch");
  pre.replaceChildren(...patch.split("\n").map((line) => {
    let cls = "";
    if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    return el("span", line + "\n", cls);
  }));
  box.replaceChildren(pre);
}

function sideBySide(patch) {
  const table = el("table", null, "side-by-side");
  let left = [], right = [], inHunk = false;
  const row = (a, b, ca, cb) => {
    const tr = el("tr");
    tr.append(el("td", a, ca), el("td", b, cb));
    table.append(tr);
  };
  const flush = () => {
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      row(left[i] ?? "", right[i] ?? "", left[i] !== undefined ? "del" : "", right[i] !== undefined ? "add" : "");
    }
    left = [];
    right = [];
  };
  for (const line of patch.split("\n")) {
    if (line.startsWith("@@")) {
      flush();
      inHunk = true;
      const tr = el("tr");
      const td = el("td", line, "hunk");
      td.colSpan = 2;
      tr.append(td);
      table.append(tr);
    } else if (!inHunk) {
      continue; // the file's header: its name is the summary's
    } else if (line.startsWith("-")) {
      left.push(line.slice(1));
    } else if (line.startsWith("+")) {
      right.push(line.slice(1));
    } else {
      flush();
      row(line.slice(1), line.slice(1), "", "");
    }
  }
  flush();
  return table;
}

async function stream() {
  const live = document.getElementById("live");
  try {
    const { ticket } = await api("/api/stream", { method: "POST", body: "{}" });
    const es = new EventSource("/api/events?ticket=" + encodeURIComponent(ticket));
    es.addEventListener("open", () => { live.textContent = "live"; });
    es.addEventListener("session", (e) => {
      const ev = JSON.parse(e.data);
      if (state.loading) state.told.set(ev.id, ev);
      if (ev.removed) {
        state.sessions.delete(ev.id);
        state.known.delete(ev.id);
      } else if (ev.session) {
        // Listed only while it passes the filter, as the server filters
        // a page (a session that changed may pass it no longer).
        if (passes(ev.session)) state.sessions.set(ev.id, ev.session);
        else state.sessions.delete(ev.id);
        state.known.set(ev.id, ev.session);
      }
      renderList();
      renderRuns(); // a run's worker is shown under it
      if (ev.id === state.selected) loadDetail();
    });
    es.addEventListener("run", (e) => {
      const ev = JSON.parse(e.data);
      if (ev.removed) state.runs.delete(ev.id);
      else if (ev.run) state.runs.set(ev.id, ev.run);
      renderRuns();
      if (ev.id === state.run) loadRun();
    });
    es.addEventListener("resync", () => { loadList(); loadRuns(); loadDetail(); loadRun(); });
    es.onerror = () => { // a ticket is good once: a new stream needs a new one
      es.close();
      live.textContent = "reconnecting…";
      setTimeout(stream, 1000);
    };
  } catch (e) {
    setText(live, e.message);
    setTimeout(stream, 3000);
  }
}

function init() {
  state.token = token();
  if (!state.token) {
    document.getElementById("live").textContent = "no token: open the link zwarm serve printed";
    return;
  }
  for (const th of document.querySelectorAll("th[data-run-sort]")) {
    th.addEventListener("click", () => {
      state.runDesc = state.runSort === th.dataset.runSort ? !state.runDesc : true;
      state.runSort = th.dataset.runSort;
      renderRuns();
    });
  }
  for (const th of document.querySelectorAll("th[data-sort]")) {
    th.addEventListener("click", () => {
      state.desc = state.sort === th.dataset.sort ? !state.desc : true;
      state.sort = th.dataset.sort;
      renderList();
    });
  }
  let typing;
  document.getElementById("filter").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => { loadList(); renderRuns(); }, 200); });
  const more = document.getElementById("more");
  more.addEventListener("click", () => loadMore());
  // The next page loads when the end of the list comes into view.
  state.observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting) && state.more) loadMore();
  });
  state.observer.observe(more);
  document.getElementById("inject-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = document.getElementById("inject-text").value;
    act("/api/sessions/" + encodeURIComponent(state.selected) + "/inject", { text, interrupt: document.getElementById("inject-interrupt").checked });
  });
  document.getElementById("land-form").addEventListener("submit", (e) => {
    e.preventDefault();
    land().catch((err) => { setText(document.getElementById("action-result"), err.message); });
  });
  document.getElementById("kill").addEventListener("click", () => act("/api/sessions/" + encodeURIComponent(state.selected) + "/kill", null, killed));
  document.getElementById("side-by-side").addEventListener("change", () => {
    for (const box of document.querySelectorAll("#diff-files .patch-box")) {
      if (box.dataset.patch !== undefined) fillPatch(box, box.dataset.patch);
    }
  });
  document.getElementById("show-diff").addEventListener("click", () => {
    showDiff().catch((err) => { setText(document.getElementById("action-result"), err.message); });
  });
  document.getElementById("spawn-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = document.getElementById("spawn-task");
    try {
      const body = await api("/api/spawn", { method: "POST", body: JSON.stringify({ task: input.value }) });
      input.value = "";
      state.sessions.set(body.session.id, body.session);
      select(body.session.id);
    } catch (err) {
      setText(document.getElementById("live"), err.message);
    }
  });
  document.getElementById("say-form").addEventListener("submit", (e) => {
    e.preventDefault();
    runAct("say", document.getElementById("say-text").value);
  });
  loadList().catch((e) => { setText(document.getElementById("live"), e.message); });
  loadRuns().catch((e) => { setText(document.getElementById("live"), e.message); });
  stream();
}

// A link with a token opened in a tab already on the page changes only
// the fragment, which reloads nothing: the page starts again with it.
window.addEventListener("hashchange", () => {
  if (/(?:^#|&)token=/.test(location.hash)) {
    token();
    location.reload();
  }
});

init();
