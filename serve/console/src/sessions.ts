// The Sessions page (every session, and making one) and a session's page:
// its record, its artifacts to download, and its events, followed live.

import { Api, describeError } from "./api";
import { h, replace } from "./dom";
import { followEvents } from "./events";
import { jsonTree } from "./result";

/** Show every session in `main`. */
export async function sessionsPage(api: Api, main: HTMLElement, stop: AbortSignal): Promise<void> {
  const listed = await api.get("/sessions");
  const rows = (listed.sessions as any[]).map((s) =>
    h(
      "tr",
      { "data-session": s.id },
      h("td", {}, h("a", { href: `#/sessions/${encodeURIComponent(s.id)}` }, s.id)),
      h("td", {}, String(s.mode)),
      h("td", {}, s.agent ? `${s.agent.name} v${s.agent.version}` : ""),
      h("td", {}, s.owner ? String(s.owner) : ""),
      h("td", {}, String(s.lastActiveAt)),
      h("td", {}, s.busy ? "busy" : ""),
    ),
  );
  const mode = h("select", { id: "new-mode" }, h("option", { value: "live" }, "live"), h("option", { value: "dry-run" }, "dry-run"));
  const asOf = h("input", { type: "text", id: "new-as-of", placeholder: "asOf (RFC 3339), optional" });
  const status = h("span", { class: "status" });
  const create = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { mode: mode.value };
    if (asOf.value.trim()) body.asOf = asOf.value.trim();
    const answer = await api.request("POST", "/sessions", body);
    if (answer.status === 201) location.hash = `#/sessions/${encodeURIComponent(answer.body.id)}`;
    else replace(status, describeError(answer));
  };
  if (stop.aborted) return;
  replace(
    main,
    h("h2", {}, "Sessions"),
    h("form", { id: "new-session", novalidate: true, onsubmit: create }, "New session: ", mode, " ", asOf, " ", h("button", { type: "submit" }, "Create"), " ", status),
    rows.length
      ? h(
          "table",
          { class: "sessions" },
          h("thead", {}, h("tr", {}, ...["Session", "Mode", "Agent", "Owner", "Last active", ""].map((c) => h("th", {}, c)))),
          h("tbody", {}, ...rows),
        )
      : h("p", {}, "No sessions."),
  );
}

/** Show session `id` in `main`, following its events until `stop` aborts. */
export async function sessionPage(api: Api, main: HTMLElement, id: string, stop: AbortSignal): Promise<void> {
  const path = `/sessions/${encodeURIComponent(id)}`;
  const session = await api.get(path);
  // The operator reads a session's workspace as its owner (routes that act
  // on a session take only its owner, named in `Toolhost-Auth`).
  const asOwner: Record<string, string> = session.owner ? { "toolhost-auth": JSON.stringify({ user: session.owner }) } : {};
  const artifacts = await api.get(`${path}/artifacts`, asOwner);
  const workspace = await api.get(`${path}/workspace`, asOwner);
  const entries = (workspace.entries as any[]).map((e) =>
    h(
      "li",
      { "data-path": e.path, "data-kind": e.kind },
      e.kind === "file"
        ? h("button", { type: "button", class: "download", onclick: () => void save(api, `${path}/workspace/${e.path.split("/").map(encodeURIComponent).join("/")}`, e.path.split("/").pop(), asOwner) }, e.path)
        : h("code", {}, `${e.path}${e.kind === "dir" ? "/" : ""}`),
      e.kind === "file" ? ` ${e.size} bytes` : ` (${e.kind})`,
    ),
  );
  const events = h("ol", { class: "events", id: "events" });
  const files = (artifacts.artifacts as any[]).map((a) =>
    h("li", {}, h("button", { type: "button", class: "download", onclick: () => void save(api, `${path}/artifacts/${encodeURIComponent(a.name)}`, a.name, asOwner) }, a.name), ` ${a.mediaType}, ${a.size} bytes, by ${a.tool ?? "?"}`),
  );
  if (stop.aborted) return;
  replace(
    main,
    h("h2", {}, `Session ${session.id}`),
    jsonTree(session),
    h("h3", {}, "Workspace files"),
    entries.length ? h("ul", { class: "workspace", id: "workspace" }, ...entries) : h("p", {}, "Empty."),
    workspace.truncated ? h("p", { class: "warn" }, "More files than are listed.") : null,
    h("h3", {}, "Artifacts"),
    files.length ? h("ul", { class: "artifacts" }, ...files) : h("p", {}, "None."),
    h("h3", {}, "Events (live)"),
    events,
  );
  void followEvents(
    api,
    id,
    (event) => {
      let data: unknown = event.data;
      try {
        data = JSON.parse(event.data);
      } catch {
        // Shown as text.
      }
      const item = h("li", { "data-event": event.id ?? "", "data-type": event.type }, h("b", {}, `#${event.id ?? "?"} ${event.type}`), jsonTree(data));
      item.querySelectorAll("details").forEach((d) => d.removeAttribute("open"));
      events.appendChild(item);
    },
    stop,
  ).catch((e) => events.appendChild(h("li", { class: "error" }, `The stream stopped: ${(e as Error).message}`)));
}

/** Save the download at `path` (asked with `extra` headers) as `name`, through a `blob:` URL. */
async function save(api: Api, path: string, name: string, extra: Record<string, string> = {}): Promise<void> {
  const response = await api.raw(path, extra);
  if (!response.ok) return;
  const url = URL.createObjectURL(new Blob([await response.arrayBuffer()], { type: "application/octet-stream" }));
  const link = h("a", { href: url, download: name });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
