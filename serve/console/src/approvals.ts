// The Approvals page: calls of `always_ask` tools waiting for a person,
// with the tool, its input and who asked, to approve or deny with a reason;
// and the approvals resolved lately. The approver is who the server can
// vouch for (its token's holder); the name typed here is only claimed.

import { Api, describeError } from "./api";
import { h, replace } from "./dom";
import { jsonTree } from "./result";

/** How often the page reads the approvals again. */
const REFRESH_MS = 1000;

/** Show the approvals in `main`, read again until `stop` aborts. */
export async function approvalsPage(api: Api, main: HTMLElement, stop: AbortSignal): Promise<void> {
  const name = h("input", { type: "text", id: "claimed-name", placeholder: "your name (recorded as claimed)" });
  const pending = h("div", { id: "pending" });
  const resolved = h("div", { id: "resolved" });
  const status = h("p", { class: "status" });
  replace(main, h("h2", {}, "Approvals"), h("p", {}, h("label", { for: "claimed-name" }, "Deciding as "), name), status, h("h3", {}, "Waiting"), pending, h("h3", {}, "Resolved"), resolved);
  const decide = async (callId: string, decision: string, reason: string) => {
    const body: Record<string, unknown> = { decision };
    if (name.value.trim()) body.claimedName = name.value.trim();
    if (reason.trim()) body.reason = reason.trim();
    const answer = await api.request("POST", `/approvals/${encodeURIComponent(callId)}`, body);
    replace(status, answer.status === 200 ? `${decision === "approve" ? "Approved" : "Denied"} ${callId}.` : describeError(answer));
    await draw();
  };
  // Rows stay where they are: a new call's row is added at the end, and a
  // row whose call was decided stays in place, marked, until the page is
  // shown again; so no row moves under the pointer.
  const rows = new Map<string, HTMLElement>();
  const list = h("ul", { class: "approvals" });
  const none = h("p", {}, "Nothing waits for approval.");
  replace(pending, none, list);
  let shownResolved = "";
  const draw = async () => {
    const listed = await api.get("/approvals");
    if (stop.aborted) return;
    const waiting = listed.pending as any[];
    const ids = new Set(waiting.map((a) => String(a.callId)));
    for (const a of waiting) {
      if (!rows.has(a.callId)) {
        const row = pendingItem(a, decide);
        rows.set(a.callId, row);
        list.appendChild(row);
      }
    }
    for (const [id, row] of rows) {
      if (!ids.has(id) && !row.classList.contains("gone")) {
        row.classList.add("gone");
        row.querySelectorAll("button, input").forEach((control) => control.setAttribute("disabled", ""));
        row.appendChild(h("span", { class: "status" }, " — no longer waiting"));
      }
    }
    none.hidden = ids.size > 0;
    const text = JSON.stringify(listed.resolved);
    if (text !== shownResolved) {
      shownResolved = text;
      replace(resolved, h("ul", { class: "approvals" }, ...(listed.resolved as any[]).map(resolvedItem)));
    }
  };
  await draw();
  if (stop.aborted) return;
  const timer = setInterval(() => void draw().catch(() => undefined), REFRESH_MS);
  stop.addEventListener("abort", () => clearInterval(timer));
}

function pendingItem(a: any, decide: (callId: string, decision: string, reason: string) => Promise<void>): HTMLElement {
  const reason = h("input", { type: "text", class: "reason", placeholder: "reason (optional)" });
  return h(
    "li",
    { "data-call": a.callId },
    h("b", {}, a.toolName),
    ` in ${a.sessionId}, asked ${a.requestedAt}`,
    a.requestedBy ? h("span", {}, " for ", h("code", {}, JSON.stringify(a.requestedBy))) : null,
    a.expiresAt ? ` (expires ${a.expiresAt})` : "",
    jsonTree(a.input, "input"),
    h("button", { type: "button", class: "approve", onclick: () => void decide(a.callId, "approve", reason.value) }, "Approve"),
    " ",
    h("button", { type: "button", class: "deny", onclick: () => void decide(a.callId, "deny", reason.value) }, "Deny"),
    " ",
    reason,
  );
}

function resolvedItem(a: any): HTMLElement {
  return h(
    "li",
    { "data-call": a.callId, "data-decision": a.decision },
    h("b", {}, a.toolName),
    ` ${a.decision} ${a.decidedAt}`,
    a.decidedBy ? h("span", {}, " by ", h("code", {}, JSON.stringify(a.decidedBy))) : null,
    a.reason ? `: ${a.reason}` : "",
  );
}
