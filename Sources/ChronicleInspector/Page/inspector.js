"use strict";
(() => {
  const ROW = 24;           // px per row, as in the style
  const PAGE = 200;         // entries per request
  const MAX_SPACER = 8e6;   // px: browsers cap element heights; beyond, the scroll maps proportionally
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const token = params.get("token") || "";

  function api(path, query) {
    const q = new URLSearchParams(query || []);
    if (token) q.set("token", token);
    const s = q.toString();
    return path + (s ? "?" + s : "");
  }
  async function getJSON(path, query) {
    const response = await fetch(api(path, query), { headers: { "Accept": "application/json" } });
    const body = await response.json().catch(() => ({ error: "the server's answer is not JSON" }));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }
  // The in-app inspector's buttons: a POST with the token in its header, through the app's store.
  async function act(path, done) {
    try {
      const response = await fetch(path, {
        method: "POST", headers: { "Accept": "application/json", "Authorization": "Bearer " + token } });
      const body = await response.json().catch(() => ({ error: "the server's answer is not JSON" }));
      if (!response.ok) throw new Error(body.error || response.statusText);
      status(done + ": entry " + body.seq);
      await refreshControls();
    } catch (err) { status(err.message, true); }
  }
  async function refreshControls() {
    const fresh = await getJSON("/api/info");
    $("undo-button").disabled = !fresh.canUndo;
    $("redo-button").disabled = !fresh.canRedo;
  }
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function status(text, bad) { const s = $("status"); s.textContent = text; s.className = bad ? "bad" : ""; }

  // ---- state of the page
  let info = null;
  let selected = null;
  let filter = null;          // null: every entry; else the query of the filter
  const pages = new Map();    // unfiltered: page number -> entries
  const pending = new Set();
  let matches = [];           // filtered: entries found so far
  let scanNext = null;        // filtered: where the next scan starts (null: at the end)
  let scanning = false;       // filtered: a search of the current filter is running
  let scanGeneration = 0;     // bumped by every change of filter: a search of an older one stops
  let flagged = new Map();    // seq -> the problems the verification found with that entry

  // ---- the URL: position and filters, so that a view can be shared
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const f = {};
    for (const k of ["type", "kind", "meta", "since", "until", "q"]) if (h.get(k)) f[k] = h.get(k);
    return { seq: h.get("seq") ? Number(h.get("seq")) : null, filter: Object.keys(f).length ? f : null };
  }
  function writeHash() {
    const h = new URLSearchParams();
    if (selected !== null) h.set("seq", String(selected));
    if (filter) for (const [k, v] of Object.entries(filter)) h.set(k, v);
    history.replaceState(null, "", location.pathname + location.search + "#" + h.toString());
  }

  // ---- the list: a window of rows over 1,000,000 entries
  function count() {
    if (filter) return matches.length;
    return info && info.first !== null ? info.last - info.first + 1 : 0;
  }
  function entryAt(index) {
    if (filter) return matches[index] || null;
    const page = Math.floor(index / PAGE);
    const entries = pages.get(page);
    if (!entries) { loadPage(page); return null; }
    return entries[index - page * PAGE] || null;
  }
  async function loadPage(page) {
    if (pending.has(page) || !info || info.first === null) return;
    pending.add(page);
    try {
      const body = await getJSON("/api/entries", { from: String(info.first + page * PAGE), limit: String(PAGE) });
      pages.set(page, body.entries);
      render();
    } catch (e) { status(e.message, true); }
    finally { pending.delete(page); }
  }
  // A filtered list searches page after page by itself while its matches do not fill the view
  // and a screenful more (a sparse filter finds nothing to show for many pages, so no scroll
  // would ask for more), until the log ends; a change of filter stops it. The promise it
  // returns is kept once the first page is in.
  function scanMore() {
    if (scanning || !filter || scanNext === null) return Promise.resolve();
    scanning = true;
    const generation = scanGeneration;
    let firstPage;
    const first = new Promise((resolve) => { firstPage = resolve; });
    (async () => {
      try {
        do {
          const q = Object.assign({ from: String(scanNext), limit: String(PAGE) }, filter);
          const body = await getJSON("/api/entries", q);
          if (generation !== scanGeneration) return;
          matches.push(...body.entries);
          scanNext = body.next;
          if (scanNext === null && body.last !== null) lastScanned = body.last;
          render();
          showScan();
          firstPage();
        } while (generation === scanGeneration && needMore());
      } catch (e) {
        if (generation === scanGeneration) { status(e.message, true); scanNext = null; showScan(); }
      } finally {
        firstPage();
        if (generation === scanGeneration) scanning = false;
      }
    })();
    return first;
  }
  // Whether the matches found so far fall short of the view and a screenful below it.
  function needMore() {
    if (!filter || scanNext === null) return false;
    const g = geometry();
    return matches.length < Math.floor(position(g) / ROW) + 2 * Math.ceil(g.view / ROW);
  }
  function showScan() {
    const found = matches.length.toLocaleString() + " matching entries";
    const searched = scanNext === null || !info || info.last === null ? ""
      : " so far, searched to entry " + Math.max(0, scanNext - 1).toLocaleString() + " of " + info.last.toLocaleString();
    $("list-footer").textContent = scanNext === null ? found : found + searched + (needMore() ? "…" : " (scroll for more)");
  }
  let lastScanned = null;

  // The list is ROW px per entry: its "virtual" height. The spacer makes the scroll range,
  // at most MAX_SPACER high; beyond, the scroll range maps proportionally onto the virtual
  // height, so that its end is the virtual end: the last row whole at the bottom of the view.
  // The rows are drawn in a window as high as the view at the scroll position, which clips
  // them, so that they never lengthen the scroll range.
  const list = $("entries");
  function geometry() {
    const n = count();
    const view = list.clientHeight;
    const full = n * ROW;
    const height = Math.min(full, MAX_SPACER);
    const range = Math.max(0, height - view);          // the scroll range, in px
    const virtualRange = Math.max(0, full - view);     // the same, in the list's px
    return { n, view, height, range, virtualRange, scale: range > 0 ? virtualRange / range : 1 };
  }
  function layout() {
    const g = geometry();
    $("spacer").style.height = g.height + "px";
    return g;
  }
  // The list's px at the top of the view.
  function position(g) { return Math.min(g.virtualRange, Math.max(0, list.scrollTop * g.scale)); }
  // Scrolls so that row `index` shows whole: where it is already, else in the middle of the
  // view, or at the bottom for the last rows. The spacer is sized first, so that a row just
  // appended is in the scroll range.
  function scrollToIndex(index) {
    const g = layout();
    const top = index * ROW;
    const at = position(g);
    if (top >= at && top + ROW <= at + g.view) return;
    const target = Math.min(g.virtualRange, Math.max(0, top - (g.view - ROW) / 2));
    list.scrollTop = target >= g.virtualRange ? g.range : target / g.scale;
  }
  function render() {
    const g = layout();
    const at = position(g);
    const first = Math.floor(at / ROW);
    const end = Math.min(g.n, Math.ceil((at + g.view) / ROW));
    const clip = $("rows");
    clip.style.transform = "translateY(" + list.scrollTop + "px)";
    clip.style.height = Math.max(0, Math.min(g.view, g.height - list.scrollTop)) + "px";
    const rows = $("rows-inner");
    rows.style.transform = "translateY(" + (first * ROW - at) + "px)";
    rows.textContent = "";
    for (let i = first; i < end; i++) rows.appendChild(rowFor(i, entryAt(i)));
    if (needMore()) scanMore();
  }
  function rowFor(index, e) {
    const row = el("div", "row");
    if (!e) {
      row.classList.add("loading");
      row.appendChild(el("span", "seq", filter ? "" : String(info.first + index)));
      row.appendChild(el("span", "", "…"));
      return row;
    }
    row.dataset.seq = String(e.seq);
    if (e.seq === selected) row.classList.add("selected");
    row.appendChild(el("span", "seq", String(e.seq)));
    row.appendChild(el("span", "", e.time.replace("T", " ").replace("Z", "")));
    row.appendChild(el("span", "kind-" + e.kind, e.kind));
    const rejected = e.sync === "rejected";
    const type = el("span", "type", e.jump ? "→ " + e.jump.summary
      : rejected ? (e.rejectedType === null ? "encrypted" : e.rejectedType) : e.typeName);
    // First, so that a long type name cannot push it out of view.
    if (rejected) {
      row.classList.add("rejected");
      type.prepend(el("span", "badge rejected", "rejected"));
    } else if (e.sync === "confirmed") {
      row.classList.add("confirmed");
    }
    if (e.encrypted) {
      row.classList.add("encrypted");
      type.appendChild(el("span", "badge sealed", sealedLabel(e.keyID)));
    }
    if (e.snapshot) type.appendChild(el("span", "badge", "snapshot"));
    if (e.flags.includes("effect")) type.appendChild(el("span", "badge", "effect"));
    const problems = flagged.get(e.seq);
    if (problems) {
      row.classList.add("flagged");
      type.appendChild(el("span", "badge flag", "✗ verification"));
    }
    row.appendChild(type);
    row.appendChild(el("span", "", Object.entries(e.metadata).map(([k, v]) => k + "=" + v).join(" ")));
    row.title = (e.typeName || sealedLabel(e.keyID)) + (rejected ? "\nrejected: " + rejectionReason(e) : "")
      + (e.sync === "confirmed" ? "\nconfirmed by the server" : "")
      + (problems ? "\n" + problems.join("\n") : "");
    row.addEventListener("click", () => select(e.seq, false));
    return row;
  }
  list.addEventListener("scroll", () => requestAnimationFrame(render));
  window.addEventListener("resize", render);
  list.addEventListener("keydown", (event) => {
    if (selected === null) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const index = indexOf(selected);
      const next = index === null ? null : entrySeqAt(index + (event.key === "ArrowDown" ? 1 : -1));
      if (next !== null) select(next, true);
    }
  });
  function sealedLabel(keyID) { return "encrypted (key " + keyID + ")"; }
  function rejectionReason(e) { return e.reason === null ? "encrypted" : e.reason || "(no reason given)"; }
  function indexOf(seq) {
    if (!filter) return info && info.first !== null ? seq - info.first : null;
    const i = matches.findIndex((e) => e.seq === seq);
    return i < 0 ? null : i;
  }
  function entrySeqAt(index) {
    if (index < 0 || index >= count()) return null;
    if (!filter) return info.first + index;
    return matches[index].seq;
  }

  // ---- the detail pane: payload, metadata, hash; state and diff for typed tools
  let detailToken = 0;
  async function select(seq, scroll) {
    selected = seq;
    writeHash();
    const slider = $("slider");
    if (Number(slider.value) !== seq) slider.value = String(seq);
    showSliderLabel();
    if (scroll) { const i = indexOf(seq); if (i !== null) scrollToIndex(i); }
    render();
    const mine = ++detailToken;
    const detail = $("detail");
    try {
      const e = await getJSON("/api/entries/" + seq);
      if (mine !== detailToken) return;
      detail.textContent = "";
      detail.appendChild(el("h2", "", "Entry " + e.seq));
      const dl = el("dl", "fields");
      const add = (k, v) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", v)); };
      add("time", e.time);
      add("kind", e.kind + (e.jump ? " → state after " + e.jump.state : ""));
      add("type", e.encrypted ? (e.typeName ? e.typeName + ", " : "") + sealedLabel(e.keyID) : e.typeName);
      add("flags", e.flags.length ? e.flags.join(", ") : "-");
      add("codec", e.codec + ", schema " + e.schemaVersion + ", " + e.size + " bytes");
      const meta = Object.entries(e.metadata);
      add("metadata", meta.length ? meta.map(([k, v]) => k + "=" + v).join("\n") : "-");
      add("hash", e.hash);
      if (e.snapshot) add("snapshot", "a snapshot holds the state after this entry");
      if (e.sync === "confirmed") add("stream", "confirmed: ordered into the shared stream by the server");
      if (e.sync === "rejected")
        add("stream", "rejected " + (e.rejectedType === null ? "(encrypted)" : e.rejectedType) + ": " + rejectionReason(e));
      detail.appendChild(dl);
      const problemsBox = el("div");
      problemsBox.id = "entry-problems";
      problemsBox.dataset.seq = String(e.seq);
      detail.appendChild(problemsBox);
      showProblems();
      if (info && info.controls.includes("restore")) {
        const button = el("button", "", "Restore to here");
        button.id = "restore-button";
        button.type = "button";
        button.addEventListener("click", () => act("/api/restore/" + e.seq, "restored to entry " + e.seq));
        detail.appendChild(button);
      }
      detail.appendChild(el("h2", "", "Payload"));
      const pre = el("pre", "", e.encrypted ? "encrypted with key " + e.keyID + " (serve with --key-file to see it)"
        : e.payloadError ? "does not decode: " + e.payloadError : JSON.stringify(e.payload, null, 2));
      pre.id = "payload";
      detail.appendChild(pre);
    } catch (err) {
      if (mine !== detailToken) return;
      detail.textContent = "";
      detail.appendChild(el("p", "error", err.message));
    }
    if (info && info.states) showState(seq, mine);
  }
  async function showState(seq, mine) {
    for (const id of ["state-title", "state", "diff-title", "diff"]) $(id).hidden = false;
    const stateBox = $("state");
    const diffBox = $("diff");
    try {
      const [s, d] = await Promise.all([
        getJSON("/api/state/" + seq),
        getJSON("/api/diff", { from: String(Math.max(0, seq - 1)), to: String(seq) }),
      ]);
      if (mine !== detailToken) return;
      stateBox.textContent = "";
      stateBox.appendChild(tree(s.state, "state", 0));
      diffBox.textContent = "";
      if (!d.changes.length) diffBox.appendChild(el("p", "hint", "no change"));
      for (const c of d.changes) {
        const line = el("div", "change " + c.op);
        line.appendChild(el("span", "", (c.path || "/") + " "));
        if ("before" in c) line.appendChild(el("span", "before", JSON.stringify(c.before)));
        if ("before" in c && "after" in c) line.appendChild(el("span", "", " → "));
        if ("after" in c) line.appendChild(el("span", "after", JSON.stringify(c.after)));
        diffBox.appendChild(line);
      }
    } catch (err) {
      if (mine !== detailToken) return;
      stateBox.textContent = "";
      stateBox.appendChild(el("p", "error", err.message));
      diffBox.textContent = "";
    }
  }
  function tree(value, key, depth) {
    const root = el("div", depth === 0 ? "tree" : "");
    if (value !== null && typeof value === "object") {
      const details = el("details");
      details.open = depth < 2;
      const summary = el("summary");
      summary.appendChild(el("span", "key", key));
      summary.appendChild(el("span", "", Array.isArray(value) ? " [" + value.length + "]" : " {" + Object.keys(value).length + "}"));
      details.appendChild(summary);
      for (const [k, v] of Object.entries(value)) details.appendChild(tree(v, k, depth + 1));
      root.appendChild(details);
    } else {
      const leaf = el("div", "leaf");
      leaf.appendChild(el("span", "key", key + ": "));
      leaf.appendChild(el("span", typeof value === "string" ? "str" : "num", JSON.stringify(value)));
      root.appendChild(leaf);
    }
    return root;
  }

  // ---- the timeline slider
  const slider = $("slider");
  let sliderTimer = null;
  function showSliderLabel() {
    $("slider-label").textContent = info && info.first !== null ? "entry " + slider.value + " of " + info.first + "…" + info.last : "no entries";
  }
  slider.addEventListener("input", () => {
    showSliderLabel();
    clearTimeout(sliderTimer);
    sliderTimer = setTimeout(() => select(Number(slider.value), true), 120);
  });

  // ---- filters
  function readFilterForm() {
    const f = {};
    const put = (k, id) => { const v = $(id).value.trim(); if (v) f[k] = v; };
    put("type", "filter-type"); put("kind", "filter-kind"); put("meta", "filter-meta");
    put("since", "filter-since"); put("until", "filter-until"); put("q", "filter-q");
    return Object.keys(f).length ? f : null;
  }
  function fillFilterForm(f) {
    const set = (id, v) => { $(id).value = v || ""; };
    set("filter-type", f && f.type); set("filter-kind", f && f.kind); set("filter-meta", f && f.meta);
    set("filter-since", f && f.since); set("filter-until", f && f.until); set("filter-q", f && f.q);
  }
  async function applyFilter(f) {
    filter = f;
    matches = [];
    scanGeneration++;
    scanning = false;
    lastScanned = null;
    list.scrollTop = 0;
    writeHash();
    if (filter) {
      scanNext = info.first === null ? null : info.first;
      $("list-footer").textContent = "searching…";
      const first = scanMore();
      render();
      if (scanNext === null) showScan();
      await first;
    } else {
      scanNext = null;
      $("list-footer").textContent = count().toLocaleString() + " entries";
      render();
    }
  }
  $("filters").addEventListener("submit", (event) => { event.preventDefault(); applyFilter(readFilterForm()); });
  $("clear").addEventListener("click", () => { fillFilterForm(null); applyFilter(null); });

  // ---- live tail
  let source = null;
  function startLive() {
    if (source || !info) return;
    const after = info.last === null ? info.head.seq : info.last;
    source = new EventSource(api("/api/stream", { after: String(after) }));
    source.addEventListener("entry", (event) => {
      const e = JSON.parse(event.data);
      if (info.first === null) info.first = e.seq;
      if (info.last === null || e.seq > info.last) info.last = e.seq;
      const index = e.seq - info.first;
      const page = Math.floor(index / PAGE);
      const entries = pages.get(page);
      if (entries && entries.length === index - page * PAGE) entries.push(e);
      updateRange();
      if (filter && scanNext === null) { scanNext = (lastScanned === null ? info.first : lastScanned + 1); scanMore(); }
      if ($("follow").checked) select(e.seq, true); else render();
      statsDirty = true;
      syncDirty = true;
    });
    source.onerror = () => status("live tail: reconnecting…", true);
    source.onopen = () => status("live");
  }
  function stopLive() { if (source) { source.close(); source = null; } status("paused"); }
  $("live").addEventListener("change", () => ($("live").checked ? startLive() : stopLive()));
  function updateRange() {
    $("log-range").textContent = info.first === null ? "no entries" : "entries " + info.first + "…" + info.last + " (" + count().toLocaleString() + (filter ? " matching" : "") + ")";
    slider.min = String(info.first === null ? 0 : info.first);
    slider.max = String(info.last === null ? 0 : info.last);
    if (!filter) $("list-footer").textContent = count().toLocaleString() + " entries";
  }

  // ---- verification
  async function verify() {
    const box = $("verify");
    box.textContent = "checking…";
    try {
      const v = await getJSON("/api/verify");
      box.textContent = "";
      const chain = v.chain;
      box.appendChild(el("p", chain.valid ? "ok" : "bad", chain.valid ? "✓ chain intact" : "✗ chain damaged"));
      if (chain.entriesChecked !== undefined)
        box.appendChild(el("p", "", chain.entriesChecked.toLocaleString() + " entries and " + chain.snapshotsChecked + " snapshots checked"));
      for (const p of chain.problems || []) box.appendChild(el("p", "error", p.location + ": " + p.message));
      if (!v.checkpoints.length) box.appendChild(el("p", "hint", "no signed checkpoints stored"));
      for (const c of v.checkpoints) {
        const line = el("p", c.valid ? "ok" : "bad", (c.valid ? "✓ " : "✗ ") + "checkpoint at " + c.size + " signed by " + (c.signers.join(", ") || "nobody"));
        box.appendChild(line);
        for (const p of c.problems) box.appendChild(el("p", "error", p));
      }
      box.appendChild(el("p", "hint", v.signaturesChecked ? "signatures checked with the verifier key" : "signatures not checked (serve with --key)"));
      const before = flagged;
      flagged = new Map((v.flagged || []).map((f) => [f.seq, f.problems]));
      if (flagged.size) box.appendChild(el("p", "bad", "✗ marked in the list: " + [...flagged.keys()].map((seq) => "entry " + seq).join(", ")));
      if (flagged.size || before.size) { render(); showProblems(); }
    } catch (err) { box.textContent = ""; box.appendChild(el("p", "error", err.message)); }
  }
  // The detail pane of an entry the verification names: its problems.
  function showProblems() {
    const box = $("entry-problems");
    if (!box) return;
    box.textContent = "";
    const problems = flagged.get(Number(box.dataset.seq));
    if (!problems) return;
    box.appendChild(el("h2", "", "✗ The verification names this entry"));
    for (const p of problems) box.appendChild(el("p", "error", p));
  }
  $("verify-button").addEventListener("click", verify);

  // ---- a shared stream's device copy: the device's pending actions and rejections, from /api/sync.
  // The outbox grows without the stream growing, so the panel is asked again every 2 s while live,
  // and at once when the stream grows. An ordinary log answers {"shared": false}: nothing shows.
  let syncDirty = false;
  let syncBusy = false;
  let syncShared = false;
  async function refreshSync() {
    if (syncBusy) return;
    syncBusy = true;
    syncDirty = false;
    try {
      showSync(await getJSON("/api/sync", { limit: "50" }));
    } catch (err) {
      $("sync").textContent = "";
      $("sync").appendChild(el("p", "error", err.message));
    } finally { syncBusy = false; }
  }
  function showSync(s) {
    const panel = $("sync-panel");
    const badge = $("pending-badge");
    syncShared = s.shared;
    panel.hidden = !s.shared;
    badge.hidden = !s.shared;
    if (!s.shared) return;
    badge.textContent = s.pendingCount.toLocaleString() + " pending";
    badge.className = "badge " + (s.pendingCount ? "pending" : "confirmed");
    const box = $("sync");
    box.textContent = "";
    const dl = el("dl", "fields");
    const add = (k, v) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", v)); };
    add("stream", s.stream || "(none)");
    add("device", s.device !== null ? s.device : s.outboxHead ? "encrypted" : "none yet (nothing sent)");
    add("confirmed", "entries up to " + s.confirmedHead);
    if (s.sync) {
      add("server head", String(s.sync.serverHead) + (s.sync.serverHead > s.confirmedHead ? " (" + (s.sync.serverHead - s.confirmedHead) + " not pulled yet)" : ""));
      add("last contact", (s.sync.lastContact || "never") + (s.sync.online ? " (online)" : " (offline)"));
      if (s.sync.lastError) add("last error", s.sync.lastError);
    } else {
      add("sync", "not run yet");
    }
    add("resolved", s.resolved === null ? "nothing yet" : s.resolved.through === null ? "encrypted"
      : "outbox actions through " + s.resolved.through + (s.resolved.streamSeq !== null ? " (by entry " + s.resolved.streamSeq + ")" : ""));
    if (s.encrypted) add("encrypted", "some entries are encrypted (serve with --key-file to read them)");
    box.appendChild(dl);
    box.appendChild(el("p", "hint", "In the list, a blue edge marks a confirmed entry, a red row a rejected action."));
    const pendingTitle = el("h2", "", "Pending (" + s.pendingCount.toLocaleString() + ")");
    pendingTitle.id = "pending-title";
    box.appendChild(pendingTitle);
    const list = el("ol", "pending-list");
    list.id = "pending";
    for (const p of s.pending) {
      const item = el("li", "pending");
      item.appendChild(el("span", "seq", String(p.seq)));
      item.appendChild(el("span", "", " " + (p.encrypted && !p.typeName ? sealedLabel(p.keyID) : p.typeName) + " "));
      item.appendChild(el("span", "badge pending", "pending"));
      item.title = "outbox entry " + p.seq + ", sent " + p.time;
      list.appendChild(item);
    }
    if (!s.pending.length) box.appendChild(el("p", "hint", "nothing pending: every action sent is in the stream"));
    else box.appendChild(list);
    if (s.pendingCount > s.pending.length)
      box.appendChild(el("p", "hint", "… and " + (s.pendingCount - s.pending.length).toLocaleString() + " more"));
    box.appendChild(el("h2", "", "Rejected (" + s.rejectionCount.toLocaleString() + ")"));
    for (const r of s.rejections) {
      const line = el("p", "rejection");
      line.appendChild(el("span", "seq", String(r.seq)));
      line.appendChild(el("span", "", " " + r.typeName + ": " + (r.reason || "(no reason given)")));
      line.addEventListener("click", () => select(r.seq, true));
      box.appendChild(line);
    }
  }
  setInterval(() => { if (syncDirty || (syncShared && source)) refreshSync(); }, 2000);

  // ---- charts, drawn by hand on canvases
  let statsDirty = false;
  async function charts() {
    statsDirty = false;
    try {
      const s = await getJSON("/api/stats", { buckets: "48" });
      drawTimeline(s.timeline);
      drawTypes(s.types);
      const names = $("type-names");
      names.textContent = "";
      for (const t of s.types) if (!t.encrypted) { const o = el("option"); o.value = t.type; names.appendChild(o); }
    } catch (err) { status(err.message, true); }
  }
  function drawTimeline(t) {
    const c = $("chart-time"), g = c.getContext("2d");
    g.clearRect(0, 0, c.width, c.height);
    if (!t.counts) return;
    const max = Math.max(1, ...t.counts), w = c.width / t.counts.length;
    g.fillStyle = "#3b6fd8";
    t.counts.forEach((n, i) => { const h = (n / max) * (c.height - 16); g.fillRect(i * w + 1, c.height - 14 - h, Math.max(1, w - 2), h); });
    g.fillStyle = "#5b6570"; g.font = "10px sans-serif";
    g.fillText(new Date(t.start / 1000).toISOString().slice(0, 16), 0, c.height - 2);
    const end = new Date((t.start + t.bucketMicros * t.counts.length) / 1000).toISOString().slice(0, 16);
    g.fillText(end, c.width - g.measureText(end).width, c.height - 2);
  }
  function drawTypes(types) {
    const c = $("chart-types"), g = c.getContext("2d");
    g.clearRect(0, 0, c.width, c.height);
    const shown = types.slice(0, 10), max = Math.max(1, ...shown.map((t) => t.count)), h = c.height / 10;
    g.font = "10px sans-serif";
    shown.forEach((t, i) => {
      g.fillStyle = "#8fb0ef"; g.fillRect(0, i * h + 2, (t.count / max) * c.width, h - 4);
      const name = t.encrypted ? sealedLabel(t.keyID) : t.type || "(no type name)";
      g.fillStyle = "#1d2430"; g.fillText(name + " (" + t.count.toLocaleString() + ")", 4, i * h + h / 2 + 3);
    });
  }
  setInterval(() => { if (statsDirty) charts(); }, 5000);

  // A link with another #seq=… or filter, opened in this tab, moves the view there.
  window.addEventListener("hashchange", async () => {
    if (!info) return;
    const h = readHash();
    if (JSON.stringify(h.filter) !== JSON.stringify(filter)) { fillFilterForm(h.filter); await applyFilter(h.filter); }
    if (h.seq !== null && h.seq !== selected) select(h.seq, true);
  });

  // ---- start
  async function start() {
    try {
      info = await getJSON("/api/info");
    } catch (err) { status(err.message, true); return; }
    $("log-path").textContent = info.path;
    if (info.controls && info.controls.length) {
      $("controls").hidden = false;
      $("undo-button").hidden = !info.controls.includes("undo");
      $("redo-button").hidden = !info.controls.includes("redo");
      $("undo-button").addEventListener("click", () => act("/api/undo", "undone"));
      $("redo-button").addEventListener("click", () => act("/api/redo", "redone"));
      $("undo-button").disabled = !info.canUndo;
      $("redo-button").disabled = !info.canRedo;
    }
    updateRange();
    const h = readHash();
    fillFilterForm(h.filter);
    await applyFilter(h.filter);
    const seq = h.seq !== null ? h.seq : info.first;
    if (seq !== null) select(seq, true);
    if ($("live").checked) startLive();
    charts();
    verify();
    refreshSync();
  }
  start();
})();