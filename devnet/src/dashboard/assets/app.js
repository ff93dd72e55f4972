// The devnet dashboard: reads /dashboard/api/state once, then follows /dashboard/api/events (server-sent
// events: `activity` for each event, `state` when owners, balances or faults change). Every value is put in
// the page as text, never as HTML.
"use strict";

const model = {
  owners: [],
  faults: {},
  chainBacked: [],
  catalog: { chains: [], tokens: [] },
  events: [],
  lastSeq: 0,
  deposits: new Map(),
  quotes: new Map(),
};

const $ = (id) => document.getElementById(id);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "href" || key === "title" || key === "rel" || key === "target" || key === "scope" || key === "colspan") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const chainName = (id) => (model.catalog.chains.find((c) => c.id === id) || { name: `chain ${id}` }).name;
const short = (text) => (text && text.length > 18 ? `${text.slice(0, 10)}…${text.slice(-6)}` : text || "");
const time = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "");
const ownerOf = (accountId) => {
  const owner = model.owners.find((o) => o.accountId === accountId);
  return owner ? owner.owner || owner.accountId : accountId || "";
};

// A transaction id, linked to the local chain's data when the chain is chain-backed.
function txNode(hash, chainId) {
  if (!hash) return null;
  const code = el("code", { title: hash, text: short(hash) });
  if (!model.chainBacked.includes(chainId)) return code;
  const href = `/dashboard/api/chain-tx?chainId=${encodeURIComponent(chainId)}&hash=${encodeURIComponent(hash)}`;
  return el("a", { href, title: `${hash} on the local ${chainName(chainId)}`, "data-tx": hash }, code);
}

// ---- deposits: each event with a depositId is a step of that deposit ----------------------------------

function depositKey(event) {
  if (event.depositId) return event.depositId;
  if (event.quoteId && model.quotes.has(event.quoteId)) return model.quotes.get(event.quoteId).depositId || `quote ${event.quoteId}`;
  if (event.quoteId && (event.kind === "quote" || event.kind === "sweep" || event.kind === "refund")) return `quote ${event.quoteId}`;
  return null;
}

function applyToDeposits(event) {
  if (event.kind === "quote") model.quotes.set(event.quoteId, event);
  const key = depositKey(event);
  if (!key) return;
  let deposit = model.deposits.get(key);
  if (!deposit) {
    deposit = { id: key, steps: [], accountId: event.accountId };
    model.deposits.set(key, deposit);
  }
  deposit.accountId = deposit.accountId || event.accountId;
  // A client that saw several transfers in one poll sweeps them as one deposit: their rows join.
  for (const part of event.covers || []) {
    const merged = model.deposits.get(part);
    if (!merged || part === key) continue;
    deposit.steps.push(...merged.steps);
    deposit.steps.sort((a, b) => a.seq - b.seq);
    model.deposits.delete(part);
  }
  if (event.covers) Object.assign(deposit, { chainId: event.source.chainId, token: event.source.token, amount: event.source.amount });
  deposit.phase = event.phase;
  deposit.at = event.at;
  if (event.kind === "deposit") {
    Object.assign(deposit, { chainId: event.chainId, token: event.token, amount: event.amount, amountUSD: event.amountUSD, txHash: event.txHash, sender: event.sender });
  } else if (event.kind === "quote" && event.purpose !== "refund" && deposit.amount === undefined) {
    Object.assign(deposit, { chainId: event.source.chainId, token: event.source.token, amount: event.source.amount });
  }
  deposit.steps.push(event);
}

function stepText(event) {
  switch (event.kind) {
    case "deposit":
      return [`${event.amount} ${event.token} on ${chainName(event.chainId)} ($${event.amountUSD}) reached ${short(event.address)}`,
        event.sender ? ` from ${short(event.sender)}` : "", " · tx ", txNode(event.txHash, event.chainId)];
    case "quote": {
      const d = event.destination;
      const fees = event.fees && event.fees.totalUSD !== undefined ? ` · fees $${event.fees.totalUSD}` : "";
      const verb = event.purpose === "refund" ? "refund quoted" : "sweep quoted";
      return [`${verb}: ${event.source.amount} ${event.source.token} → ${d.amount} ${d.token} on ${chainName(d.chainId)} to ${short(d.address)}${fees} · quote `, el("code", { text: short(event.quoteId), title: event.quoteId })];
    }
    case "sweep":
    case "refund": {
      const quote = model.quotes.get(event.quoteId);
      const d = quote && quote.destination;
      const delivered = d && d.rawAmount === event.deliveredRawAmount ? `${d.amount} ${d.token}` : `${event.deliveredRawAmount || "0"} (smallest units)`;
      const what = event.phase === "failed" ? `${event.kind} failed: ${event.error || "no reason given"}` : `${event.kind === "refund" ? "refunded" : "delivered"} ${delivered} to ${short(event.to)} on ${chainName(event.toChainId)}`;
      return [what, " · tx ", txNode(event.transactionId, event.toChainId), event.sourceTxHash ? " · collected in " : "", txNode(event.sourceTxHash, event.chainId)];
    }
    case "send_refused":
      return [`send refused (${event.status} ${event.code}): ${event.error}`];
    case "fault":
      return [`injected fault on ${event.service}${event.path}: ${event.status ? `HTTP ${event.status}` : ""}${event.delayMs ? ` after ${event.delayMs} ms` : ""}`];
    case "faults":
      return [`faults ${event.action}: ${event.message}`];
    default:
      return [JSON.stringify(event)];
  }
}

function phaseBadge(phase) {
  return el("span", { class: `phase phase-${phase || "none"}`, "data-phase": phase || "", text: phase || "—" });
}

// Rows are kept per deposit and rebuilt only when that deposit changed, so that a row being read or
// focused with the keyboard stays where it is.
const depositRows = new Map();

function depositRow(deposit, open) {
  const steps = el("ol", { class: "steps" }, ...deposit.steps.map((step) =>
    el("li", { "data-phase": step.phase }, phaseBadge(step.phase), " ", el("time", { text: time(step.at) }), " ", ...stepText(step))));
  const details = el("details", { "data-deposit-id": deposit.id, open },
    el("summary", { title: deposit.id }, el("code", { text: short(deposit.id) })), steps);
  const amount = deposit.amount !== undefined ? `${deposit.amount} ${deposit.token} on ${chainName(deposit.chainId)}` : "";
  return el("tr", { "data-deposit-id": deposit.id, "data-phase": deposit.phase },
    el("td", {}, details),
    el("td", { class: "address", title: ownerOf(deposit.accountId) }, el("code", { text: short(ownerOf(deposit.accountId)) })),
    el("td", { text: amount }),
    el("td", {}, phaseBadge(deposit.phase)),
    el("td", { text: time(deposit.at) }));
}

function renderDeposits() {
  const rows = $("deposit-rows");
  const deposits = [...model.deposits.values()].sort((a, b) => b.at - a.at || b.steps[0].seq - a.steps[0].seq);
  if (!deposits.length) {
    rows.replaceChildren(el("tr", { class: "empty" }, el("td", { colspan: "5", text: "No deposit yet." })));
    return;
  }
  const wanted = deposits.map((deposit) => {
    const version = `${deposit.steps.length}|${deposit.phase}|${ownerOf(deposit.accountId)}`;
    const kept = depositRows.get(deposit.id);
    if (kept && kept.version === version) return kept.row;
    const open = Boolean(kept && kept.row.querySelector("details").open);
    const row = depositRow(deposit, open);
    if (kept) kept.row.replaceWith(row);
    depositRows.set(deposit.id, { version, row });
    return row;
  });
  for (const id of depositRows.keys()) if (!model.deposits.has(id)) depositRows.delete(id);
  const current = [...rows.children];
  if (current.length !== wanted.length || current.some((row, i) => row !== wanted[i])) rows.replaceChildren(...wanted);
}

// ---- owners, balances, faults ----------------------------------------------------------------------------

function balanceList(lines, withAddress) {
  if (!lines.length) return el("p", { class: "empty", text: "nothing" });
  return el("table", { class: withAddress ? "balances destinations" : "balances deposit-lines" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Chain" }), el("th", { scope: "col", text: "Token" }), el("th", { scope: "col", text: withAddress ? "Held" : "Held (received ever)" }))),
    el("tbody", {}, ...lines.map((line) => el("tr", { "data-chain": line.chainId, "data-token": line.token },
      el("td", { text: line.chain }), el("td", { text: line.token }),
      el("td", { class: "amount", text: withAddress ? `${line.amount} at ${short(line.address)}` : `${line.amount} (${line.received})` })))));
}

function renderOwners() {
  const list = $("owner-list");
  if (!model.owners.length) {
    list.replaceChildren(el("p", { class: "empty", text: "No owner yet: start a depositkit client against this devnet." }));
  } else {
    list.replaceChildren(...model.owners.map((owner) => el("article", { class: "card", "data-owner": owner.owner || "", "data-account": owner.accountId },
      el("h3", {}, el("code", { class: "address", text: owner.owner || "(owner unknown)" })),
      el("dl", {},
        el("dt", { text: "Account" }), el("dd", {}, el("code", { text: owner.accountId })),
        el("dt", { text: "EVM deposit address" }), el("dd", {}, el("code", { class: "address", text: owner.evmAddress })),
        el("dt", { text: "Solana deposit address" }), el("dd", {}, el("code", { class: "address", text: owner.solanaAddress }))),
      el("h4", { text: "At the deposit addresses" }), balanceList(owner.balances, false),
      el("h4", { text: "Delivered to destinations (ledger)" }), balanceList(owner.destinations, true))));
  }
  $("owner-options").replaceChildren(...model.owners.filter((o) => o.owner).map((o) => el("option", { value: o.owner })));
  const names = model.owners.map((o) => `${o.accountId}=${o.owner}`).join(",");
  if (names !== renderOwners.names) {
    renderOwners.names = names;
    renderDeposits();
  }
}

function renderFaults() {
  const items = [];
  const faults = model.faults || {};
  for (const fault of faults.pending || []) {
    const where = `${fault.service || "user-rpc"}${fault.path || ""}`;
    const what = [fault.status ? `HTTP ${fault.status}` : "", fault.delayMs ? `${fault.delayMs} ms delay` : ""].filter(Boolean).join(", ");
    items.push(`${where}: ${what} × ${fault.count}`);
  }
  if (faults.sweeps) items.push(`sweeps: ${faults.sweeps.mode} × ${faults.sweeps.count}`);
  if (faults.forgedJwts) items.push(`forged JWTs × ${faults.forgedJwts}`);
  $("fault-list").replaceChildren(...(items.length ? items.map((text) => el("li", { text })) : [el("li", { class: "empty", text: "None." })]));
  const off = model.faultInjection === false;
  for (const button of document.querySelectorAll("#sweep-fault-form button, #http-fault-form button, #clear-faults")) button.disabled = off;
  if (off) $("fault-message").textContent = "Fault injection is off: start devnet with --enable-fault-injection to use these controls.";
}

// ---- the event log -------------------------------------------------------------------------------------

function matchesFilters(event) {
  const kind = $("filter-kind").value;
  const phase = $("filter-phase").value;
  const text = $("filter-text").value.trim().toLowerCase();
  if (kind && event.kind !== kind) return false;
  if (phase && event.phase !== phase) return false;
  if (text) {
    const haystack = [ownerOf(event.accountId), event.accountId, event.depositId, event.quoteId, event.txHash, event.transactionId, event.address, event.to]
      .filter(Boolean).join(" ").toLowerCase();
    if (!haystack.includes(text)) return false;
  }
  return true;
}

function eventRow(event) {
  return el("tr", { "data-seq": event.seq, "data-kind": event.kind },
    el("td", { text: event.seq }), el("td", {}, el("time", { text: time(event.at) })),
    el("td", { text: event.kind }), el("td", {}, event.phase ? phaseBadge(event.phase) : ""),
    el("td", {}, event.depositId ? el("code", { title: event.depositId, text: `${short(event.depositId)} ` }) : "", ...stepText(event)));
}

function renderLog() {
  const shown = model.events.filter(matchesFilters).slice(-500).reverse();
  $("event-rows").replaceChildren(...shown.map(eventRow));
}

// ---- data ---------------------------------------------------------------------------------------------

function applyState(state) {
  model.owners = state.owners || [];
  model.faults = state.faults || {};
  model.faultInjection = state.faultInjection;
  model.chainBacked = state.chainBacked || [];
  renderOwners();
  renderFaults();
}

function applyEvent(event) {
  if (event.seq <= model.lastSeq) return;
  model.lastSeq = event.seq;
  model.events.push(event);
  if (model.events.length > 5000) model.events.shift();
  applyToDeposits(event);
}

let pending = false;
function renderSoon() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    renderDeposits();
    renderLog();
  });
}

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
}

function follow() {
  const source = new EventSource(`/dashboard/api/events?after=${model.lastSeq}`);
  source.addEventListener("open", () => setConnection("live", "live"));
  source.addEventListener("error", () => setConnection("reconnecting", "reconnecting…"));
  source.addEventListener("state", (message) => applyState(JSON.parse(message.data)));
  source.addEventListener("activity", (message) => {
    applyEvent(JSON.parse(message.data));
    renderSoon();
  });
  source.addEventListener("failure", (message) => setConnection("failing", `devnet failed to read its state: ${JSON.parse(message.data)}`));
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = answer.error;
    throw new Error(typeof error === "string" ? error : (error && error.message) || `HTTP ${response.status}`);
  }
  return answer;
}

function say(node, text, failed) {
  node.textContent = text;
  node.classList.toggle("error", Boolean(failed));
  node.setAttribute("role", failed ? "alert" : "status");
}

function optionalNumber(form, name) {
  const text = form.elements[name].value.trim();
  if (text === "") return undefined;
  const number = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(number)) throw new Error(`${name}: "${text}" is not a whole number`);
  return number;
}

function wireForms() {
  const chainSelect = $("deposit-chain");
  chainSelect.replaceChildren(...model.catalog.chains.map((c) => el("option", { value: c.id, text: `${c.name} (${c.id})`, selected: c.id === 8453 })));
  $("deposit-token").replaceChildren(...model.catalog.tokens.map((t) => el("option", { value: t, text: t, selected: t === "USDC" })));

  $("deposit-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const form = submit.target;
    const message = $("deposit-message");
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const answer = await call("POST", "/dashboard/api/deposits", {
        to: form.elements.to.value,
        chainId: Number(form.elements.chainId.value),
        token: form.elements.token.value,
        amount: form.elements.amount.value,
      });
      say(message, answer.message, false);
    } catch (error) {
      say(message, `Not sent: ${error.message}`, true);
    } finally {
      button.disabled = false;
    }
  });

  const faultMessage = $("fault-message");
  $("sweep-fault-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const form = submit.target;
    try {
      const answer = await call("POST", "/dashboard/api/faults", { kind: "sweeps", mode: form.elements.mode.value, count: optionalNumber(form, "count") });
      say(faultMessage, `Armed: ${answer.message}`, false);
    } catch (error) {
      say(faultMessage, `Not armed: ${error.message}`, true);
    }
  });
  $("http-fault-form").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const form = submit.target;
    try {
      const body = { kind: "http", service: form.elements.service.value };
      const path = form.elements.path.value.trim();
      if (path) body.path = path;
      for (const name of ["status", "delayMs", "count"]) {
        const value = optionalNumber(form, name);
        if (value !== undefined) body[name] = value;
      }
      const answer = await call("POST", "/dashboard/api/faults", body);
      say(faultMessage, `Armed: ${answer.message}`, false);
    } catch (error) {
      say(faultMessage, `Not armed: ${error.message}`, true);
    }
  });
  $("clear-faults").addEventListener("click", async () => {
    try {
      const answer = await call("DELETE", "/dashboard/api/faults");
      say(faultMessage, `Cleared: ${answer.message}`, false);
    } catch (error) {
      say(faultMessage, `Not cleared: ${error.message}`, true);
    }
  });
  for (const id of ["filter-kind", "filter-phase", "filter-text"]) {
    for (const type of ["input", "change"]) $(id).addEventListener(type, () => renderLog());
  }
  $("log-filters").addEventListener("submit", (submit) => submit.preventDefault());
}

async function start() {
  try {
    const state = await call("GET", "/dashboard/api/state");
    model.catalog = state.catalog;
    for (const event of state.events) applyEvent(event);
    applyState(state);
    wireForms();
    renderLog();
    follow();
  } catch (error) {
    setConnection("failing", `cannot read devnet's state: ${error.message}`);
  }
}

start();
