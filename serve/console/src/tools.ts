// The Tools page (every tool of an agent with what it may do) and the Try
// page (a form from the tool's input schema, or raw JSON, called in a
// scratch, existing or new session).

import { Api, describeError } from "./api";
import { h, replace } from "./dom";
import { InputError, schemaForm } from "./form";
import { renderEnvelope } from "./result";

/** `?agent=NAME` for `agent`, or nothing for the default agent. */
function agentQuery(agent: string | null, joiner = "?"): string {
  return agent ? `${joiner}agent=${encodeURIComponent(agent)}` : "";
}

/** Show every tool of `agent` (the default agent when `null`) in `main`, in detail. */
export async function toolsPage(api: Api, main: HTMLElement, agent: string | null, stop: AbortSignal): Promise<void> {
  const listing = await api.get(`/tools?detail=true${agentQuery(agent, "&")}`);
  const agents = ((await api.get("/agents")).agents as any[]).map((a) => String(a.name));
  const picker = h("select", { id: "agent" }, ...agents.map((name) => h("option", { value: name, selected: name === (listing.agent?.name ?? "default") }, name)));
  picker.addEventListener("change", () => {
    location.hash = `#/tools${picker.value === "default" ? "" : agentQuery(picker.value)}`;
  });
  const rows = (listing.tools as any[]).map((tool) =>
    h(
      "tr",
      { "data-tool": tool.name },
      h("td", {}, h("a", { href: `#/tools/${encodeURIComponent(tool.name)}${agentQuery(agent)}` }, tool.name)),
      h("td", { class: "description" }, String(tool.description ?? "")),
      h("td", {}, String(tool.effect)),
      h("td", {}, String(tool.permission ?? "")),
      h("td", {}, origin(tool)),
      h("td", { class: "grants" }, ...grantLines(tool.grants).map((line) => h("div", {}, line))),
      h("td", { class: "imports" }, ungranted(tool).length ? h("span", { class: "warn" }, `${ungranted(tool).length} not granted`) : ""),
      h("td", { class: "lints" }, (tool.lints ?? []).length ? h("span", { class: "warn" }, `${tool.lints.length} lint`) : ""),
      h("td", { class: "lock" }, lockText(tool.lock)),
      h("td", {}, tool.enabled === false ? "disabled" : "enabled"),
    ),
  );
  const failures = (listing.failures ?? []) as any[];
  const unavailable = (listing.unavailable ?? []) as any[];
  if (stop.aborted) return;
  replace(
    main,
    h("h2", {}, `Tools of ${listing.agent?.name ?? "the default agent"} v${listing.agent?.version ?? "?"}`),
    agents.length > 1 ? h("p", {}, h("label", { for: "agent" }, "Agent "), picker) : null,
    h(
      "table",
      { class: "tools" },
      h("thead", {}, h("tr", {}, ...["Tool", "Description", "Effect", "Permission", "Origin", "Grants", "Imports", "Lints", "tools.lock", "State"].map((c) => h("th", {}, c)))),
      h("tbody", {}, ...rows),
    ),
    failures.length || unavailable.length
      ? h(
          "section",
          { class: "failures", id: "failures" },
          h("h3", {}, "Not loaded"),
          h(
            "ul",
            {},
            ...failures.map((f) => h("li", {}, h("b", {}, String(f.tool ?? f.file ?? "?")), `: ${f.reason}`)),
            ...unavailable.map((u) => h("li", {}, JSON.stringify(u))),
          ),
        )
      : null,
  );
}

/** A tool's grants, one line each; environment variables by name only. */
function grantLines(grants: any): string[] {
  if (!grants) return [];
  const lines: string[] = [];
  for (const dir of ["workspace", "state", "artifacts"]) {
    if (grants[dir] && grants[dir] !== "none") lines.push(`${dir}: ${grants[dir]}`);
  }
  if (grants.kv?.length) lines.push(`kv: ${grants.kv.join(", ")}`);
  if (grants.http?.length) lines.push(`http: ${grants.http.join(", ")}`);
  if (grants.env?.length) lines.push(`env: ${grants.env.join(", ")}`);
  if (grants.sessions?.length) lines.push(`sessions: ${grants.sessions.join(", ")}`);
  if (grants.reminders) lines.push(`reminders: ${grants.reminders.join(", ") || "messages"}`);
  if (grants.metrics) lines.push("metrics");
  if (grants.ask?.length) lines.push(`ask: ${grants.ask.join(", ")}`);
  return lines.length ? lines : ["none"];
}

/** The imports a tool's grants do not cover. */
function ungranted(tool: any): any[] {
  return ((tool.imports ?? []) as any[]).filter((i) => String(i.status).startsWith("NOT GRANTED"));
}

function lockText(lock: any): string {
  switch (lock?.state) {
    case "pinned":
      return "pinned";
    case "drifted":
      return `drifted: ${(lock.changes ?? []).join("; ")}`;
    case "unlocked":
      return "not in tools.lock";
    default:
      return "no tools.lock";
  }
}

/** What `toolhost inspect` shows of `tool`, for its page. */
function details(tool: any): HTMLElement {
  const imports = (tool.imports ?? []) as any[];
  const lints = (tool.lints ?? []) as any[];
  const missing = ungranted(tool).length;
  return h(
    "details",
    { class: "inspection", open: missing > 0 || lints.length > 0 },
    h("summary", {}, `What it may do: ${imports.length} imports${missing ? `, ${missing} not granted` : ""}, ${lints.length} lint findings`),
    h("p", {}, h("b", {}, "Grants: "), grantLines(tool.grants).join(" · ")),
    h("p", {}, h("b", {}, "tools.lock: "), lockText(tool.lock)),
    imports.length
      ? h("table", { class: "imports" }, ...imports.map((i) => h("tr", {}, h("td", {}, h("code", {}, String(i.import))), h("td", { class: String(i.status).startsWith("NOT") ? "warn" : "" }, String(i.status)))))
      : h("p", {}, "Imports nothing."),
    lints.length ? h("ul", { class: "lints" }, ...lints.map((l) => h("li", {}, h("code", {}, l.rule), ` ${l.message}`))) : null,
  );
}

function origin(tool: any): string {
  if (tool.custom) return "custom";
  if (tool.mcpServer) return `MCP server ${tool.mcpServer}`;
  return typeof tool.origin === "string" ? tool.origin : JSON.stringify(tool.origin ?? "file");
}

/** Show the Try page of the tool `name` in `main`. */
export async function tryPage(api: Api, main: HTMLElement, name: string, agent: string | null, stop: AbortSignal): Promise<void> {
  const answer = await api.request("GET", `/tools/${encodeURIComponent(name)}${agentQuery(agent)}`);
  if (answer.status !== 200) {
    replace(main, h("p", { class: "error" }, describeError(answer)));
    return;
  }
  const tool = answer.body;
  const form = schemaForm(tool.inputSchema);
  const raw = h("textarea", { class: "json raw", rows: "8", hidden: true });
  const rawToggle = h("input", { type: "checkbox", id: "raw-json" });
  rawToggle.addEventListener("change", () => {
    if (rawToggle.checked) {
      try {
        raw.value = JSON.stringify(form.read(), null, 2);
      } catch {
        raw.value = "{}";
      }
    }
    raw.hidden = !rawToggle.checked;
    form.element.hidden = rawToggle.checked;
  });
  const session = h(
    "select",
    { id: "session" },
    h("option", { value: "scratch" }, "scratch session (one call)"),
    h("option", { value: "new" }, "new session"),
    h("option", { value: "dry-run" }, "new dry-run session"),
    h("option", { value: "existing" }, "existing session…"),
  );
  const known = ((await api.get("/sessions")).sessions as any[]).filter((s) => !agent || s.agent?.name === agent);
  const sessionId = h("input", { type: "text", id: "session-id", placeholder: "ses_…", list: "known-sessions", hidden: true });
  const knownList = h("datalist", { id: "known-sessions" }, ...known.map((s) => h("option", { value: s.id }, `${s.mode} ${s.lastActiveAt}`)));
  const asOf = h("input", { type: "text", id: "as-of", placeholder: "asOf (RFC 3339), optional", hidden: true });
  session.addEventListener("change", () => {
    sessionId.hidden = session.value !== "existing";
    asOf.hidden = session.value !== "new" && session.value !== "dry-run";
  });
  const status = h("p", { class: "status" });
  const output = h("div", { class: "output" });
  const run = h("button", { type: "submit", id: "run" }, "Call");
  const submit = async (event: Event) => {
    event.preventDefault();
    replace(output);
    let input: unknown;
    try {
      input = rawToggle.checked ? JSON.parse(raw.value) : form.read();
    } catch (e) {
      replace(status, `The input is not valid JSON: ${(e as Error).message}`);
      return;
    }
    run.disabled = true;
    replace(status, "calling…");
    try {
      const body: Record<string, unknown> = { input, includeTrace: true };
      const chosen = await sessionFor(api, session.value, sessionId.value.trim(), { agent, asOf: asOf.value.trim() });
      if (chosen) body.sessionId = chosen;
      else if (agent) body.agent = agent;
      let answer = await api.request("POST", `/tools/${encodeURIComponent(name)}`, body);
      // A call that waits (an approval, a custom tool's result, a question)
      // is followed until it ends.
      while (answer.status === 202 && !stop.aborted) {
        const callId = String(answer.body.callId);
        status.dataset.call = callId;
        replace(status, `call ${callId} is ${String(answer.body.status).replace(/_/g, " ")}`, answer.body.status === "awaiting_approval" ? h("span", {}, " — ", h("a", { href: "#/approvals" }, "approve it")) : null);
        answer = await api.request("GET", `/calls/${encodeURIComponent(callId)}?wait=20&trace=true`);
      }
      if (answer.status === 200) {
        form.showErrors([]);
        replace(status, chosen ? `done in session ${chosen}` : "done");
        replace(output, renderEnvelope(answer.body));
      } else {
        const errors: InputError[] = answer.body?.error?.errors ?? [];
        form.showErrors(errors);
        replace(status, describeError(answer));
      }
    } catch (e) {
      replace(status, (e as Error).message);
    } finally {
      run.disabled = false;
    }
  };
  if (stop.aborted) return;
  replace(
    main,
    h("h2", {}, tool.name),
    h("p", { class: "description" }, String(tool.description ?? "")),
    h("p", { class: "facts" }, `effect ${tool.effect} · permission ${tool.permission}`, tool.hasDryRunResult ? " · has a dry-run result" : ""),
    details(tool),
    h(
      "form",
      { id: "try", novalidate: true, onsubmit: submit },
      form.element,
      raw,
      h("p", {}, rawToggle, h("label", { for: "raw-json" }, " edit the input as raw JSON")),
      h("p", {}, h("label", { for: "session" }, "Session "), session, " ", sessionId, knownList, " ", asOf),
      run,
    ),
    status,
    output,
  );
}

/** The session id a call runs in: none (scratch), the one typed, or a new
 * one (of `agent`, frozen at `asOf` when given). */
async function sessionFor(
  api: Api,
  choice: string,
  typed: string,
  made: { agent: string | null; asOf: string },
): Promise<string | null> {
  if (choice === "scratch") return null;
  if (choice === "existing") {
    if (!typed) throw new Error("Type or pick the id of the session to call in.");
    return typed;
  }
  const body: Record<string, unknown> = { mode: choice === "dry-run" ? "dry-run" : "live" };
  if (made.agent) body.agent = made.agent;
  if (made.asOf) body.asOf = made.asOf;
  const answer = await api.request("POST", "/sessions", body);
  if (answer.status !== 201) throw new Error(`The session was not made: ${describeError(answer)}`);
  return answer.body.id;
}
