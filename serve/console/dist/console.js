(() => {
  var __defProp = Object.defineProperty;
  var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
  var __publicField = (obj, key, value) => __defNormalProp(obj, typeof key !== "symbol" ? key + "" : key, value);

  // serve/console/src/api.ts
  var LoginNeeded = class extends Error {
  };
  var Api = class {
    constructor(slug) {
      __publicField(this, "slug", slug);
      __publicField(this, "token", null);
    }
    /** Use `token` from now on (kept in this page's memory only). */
    login(token) {
      this.token = token;
    }
    /** Forget the token; whether there was one. */
    logout() {
      const had = this.token !== null;
      this.token = null;
      return had;
    }
    /** `method` on `path` (under `/<slug>/v1`) with `body` as JSON, and `extra` headers. */
    async request(method, path, body, extra = {}) {
      const response = await fetch(this.url(path), {
        method,
        headers: { ...this.headers(body !== void 0), ...extra },
        body: body === void 0 ? void 0 : JSON.stringify(body),
        credentials: "omit"
      });
      if (response.status === 401) throw new LoginNeeded("the server needs its token");
      const text = await response.text();
      let parsed = text;
      try {
        parsed = JSON.parse(text);
      } catch {
      }
      return { status: response.status, body: parsed };
    }
    /** A GET (with `extra` headers) whose body is the answer; any other status is an error. */
    async get(path, extra = {}) {
      const answer = await this.request("GET", path, void 0, extra);
      if (answer.status !== 200) throw new Error(describeError(answer));
      return answer.body;
    }
    /** The raw response of a GET (a stream, a download). */
    async raw(path, extra = {}, signal) {
      const response = await fetch(this.url(path), {
        headers: { ...this.headers(false), ...extra },
        credentials: "omit",
        signal
      });
      if (response.status === 401) throw new LoginNeeded("the server needs its token");
      return response;
    }
    url(path) {
      return `/${encodeURIComponent(this.slug)}/v1${path}`;
    }
    headers(json) {
      const headers = { "x-toolhost-console": "1" };
      if (json) headers["content-type"] = "application/json";
      if (this.token !== null) headers["authorization"] = `Bearer ${this.token}`;
      return headers;
    }
  };
  function describeError(answer) {
    const error = answer.body && typeof answer.body === "object" ? answer.body.error : null;
    if (error && typeof error === "object") return `${error.code}: ${error.message}`;
    return `HTTP ${answer.status}: ${String(answer.body).slice(0, 500)}`;
  }

  // serve/console/src/dom.ts
  function h(tag, attrs = {}, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === void 0 || value === false) continue;
      if (typeof value === "function") {
        element.addEventListener(name.slice(2), value);
      } else {
        element.setAttribute(name, value === true ? "" : value);
      }
    }
    append(element, ...children);
    return element;
  }
  function append(parent, ...children) {
    for (const child of children) {
      if (child === null || child === void 0 || child === false) continue;
      parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
  }
  function replace(parent, ...children) {
    while (parent.firstChild) parent.removeChild(parent.firstChild);
    append(parent, ...children);
  }

  // serve/console/src/result.ts
  var SHOWN_IMAGES = /* @__PURE__ */ new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"]);
  function renderEnvelope(envelope) {
    const facts = [
      badge(envelope.isError ? "error" : "ok", envelope.isError ? "isError" : "ok"),
      envelope.stubbed ? badge("stubbed", "stubbed (dry run)") : null,
      fact("tool", envelope.toolName),
      fact("call", envelope.callId),
      fact("agent", envelope.agent ? `${envelope.agent.name} v${envelope.agent.version}` : void 0),
      fact("duration", envelope.durationMs !== void 0 ? `${envelope.durationMs} ms` : void 0),
      fact("attempts", envelope.attempts)
    ];
    return h(
      "section",
      { class: "envelope" },
      h("div", { class: "facts" }, ...facts),
      h("h3", {}, "Result"),
      h("div", { class: "result" }, renderResult(envelope.result)),
      envelope.trace ? trace(envelope.trace) : null,
      envelope.usage ? h("details", { class: "usage" }, h("summary", {}, "Receipt (usage)"), receipt(envelope.usage)) : null
    );
  }
  function trace(trace2) {
    const logs = trace2.logs ?? [];
    return h(
      "details",
      { class: "trace", open: logs.length > 0 || Boolean(trace2.stdout) || Boolean(trace2.stderr) },
      h("summary", {}, `Trace: ${logs.length} log lines`),
      logs.length ? h("ol", { class: "logs" }, ...logs.map((l) => h("li", {}, h("code", {}, String(l.level ?? "")), " ", String(l.message ?? "")))) : null,
      trace2.logsDropped ? h("p", {}, `${trace2.logsDropped} more dropped`) : null,
      trace2.stdout ? h("div", {}, h("b", {}, "stdout"), h("pre", { class: "text stdout" }, trace2.stdout)) : null,
      trace2.stderr ? h("div", {}, h("b", {}, "stderr"), h("pre", { class: "text stderr" }, trace2.stderr)) : null,
      trace2.failure ? h("p", { class: "error" }, trace2.failure) : null,
      trace2.approvedBy ? h("p", {}, "approved by ", h("code", {}, JSON.stringify(trace2.approvedBy))) : null
    );
  }
  function badge(kind, text) {
    return h("span", { class: `badge ${kind}` }, text);
  }
  function fact(name, value) {
    if (value === void 0 || value === null) return null;
    return h("span", { class: "fact" }, h("b", {}, `${name} `), String(value));
  }
  function renderResult(result) {
    if (typeof result === "string") return h("pre", { class: "text" }, result);
    if (result && typeof result === "object" && Array.isArray(result.content)) {
      return h("div", { class: "blocks" }, ...result.content.map(safeBlock));
    }
    return jsonTree(result);
  }
  function safeBlock(block) {
    try {
      return renderBlock(block);
    } catch (e) {
      return h("p", { class: "error" }, `A ${String(block?.type)} block cannot be shown: ${e.message}`);
    }
  }
  function renderBlock(block) {
    switch (block?.type) {
      case "text":
        return h("pre", { class: "text" }, String(block.text ?? ""));
      case "json":
        return jsonTree(block.json);
      case "image":
        if (SHOWN_IMAGES.has(block.mediaType)) {
          return h("img", { class: "image", alt: "image result", src: blobUrl(block.data, block.mediaType) });
        }
        return download(block, "image");
      case "search_result":
        return h("div", { class: "search" }, h("b", {}, String(block.title ?? "")), " ", h("code", {}, String(block.source ?? "")), h("pre", { class: "text" }, String(block.text ?? "")));
      case "resource_link":
        return h("div", { class: "link" }, "resource ", h("code", {}, String(block.uri ?? "")), block.name ? ` (${block.name})` : "");
      case "audio":
      case "document":
        return download(block, block.type);
      default:
        return jsonTree(block);
    }
  }
  function download(block, kind) {
    const name = typeof block.name === "string" && block.name ? block.name : `${kind}-result`;
    const link = h("a", { href: blobUrl(block.data, "application/octet-stream"), download: name }, `download ${kind}: ${name}`);
    return h("div", { class: "download" }, link, ` (${String(block.mediaType ?? "unknown type")})`);
  }
  function blobUrl(base64, type) {
    const text = atob(typeof base64 === "string" ? base64 : "");
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return URL.createObjectURL(new Blob([bytes], { type }));
  }
  function jsonTree(value, key) {
    const label = key === void 0 ? null : h("span", { class: "key" }, `${key}: `);
    if (value === null || typeof value !== "object") {
      return h("div", { class: "leaf" }, label, h("span", { class: `json-${value === null ? "null" : typeof value}` }, JSON.stringify(value) ?? "undefined"));
    }
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
    return h(
      "details",
      { class: "tree", open: true },
      h("summary", {}, label, summary),
      ...entries.map(([k, v]) => jsonTree(v, k))
    );
  }
  function receipt(usage) {
    return h(
      "table",
      { class: "receipt" },
      ...Object.entries(usage).map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, typeof value === "object" ? JSON.stringify(value) : String(value))))
    );
  }

  // serve/console/src/approvals.ts
  var REFRESH_MS = 1e3;
  async function approvalsPage(api, main, stop) {
    const name = h("input", { type: "text", id: "claimed-name", placeholder: "your name (recorded as claimed)" });
    const pending = h("div", { id: "pending" });
    const resolved = h("div", { id: "resolved" });
    const status = h("p", { class: "status" });
    replace(main, h("h2", {}, "Approvals"), h("p", {}, h("label", { for: "claimed-name" }, "Deciding as "), name), status, h("h3", {}, "Waiting"), pending, h("h3", {}, "Resolved"), resolved);
    const decide = async (callId, decision, reason) => {
      const body = { decision };
      if (name.value.trim()) body.claimedName = name.value.trim();
      if (reason.trim()) body.reason = reason.trim();
      const answer = await api.request("POST", `/approvals/${encodeURIComponent(callId)}`, body);
      replace(status, answer.status === 200 ? `${decision === "approve" ? "Approved" : "Denied"} ${callId}.` : describeError(answer));
      await draw();
    };
    const rows = /* @__PURE__ */ new Map();
    const list = h("ul", { class: "approvals" });
    const none = h("p", {}, "Nothing waits for approval.");
    replace(pending, none, list);
    let shownResolved = "";
    const draw = async () => {
      const listed = await api.get("/approvals");
      if (stop.aborted) return;
      const waiting = listed.pending;
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
        replace(resolved, h("ul", { class: "approvals" }, ...listed.resolved.map(resolvedItem)));
      }
    };
    await draw();
    if (stop.aborted) return;
    const timer = setInterval(() => void draw().catch(() => void 0), REFRESH_MS);
    stop.addEventListener("abort", () => clearInterval(timer));
  }
  function pendingItem(a, decide) {
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
      reason
    );
  }
  function resolvedItem(a) {
    return h(
      "li",
      { "data-call": a.callId, "data-decision": a.decision },
      h("b", {}, a.toolName),
      ` ${a.decision} ${a.decidedAt}`,
      a.decidedBy ? h("span", {}, " by ", h("code", {}, JSON.stringify(a.decidedBy))) : null,
      a.reason ? `: ${a.reason}` : ""
    );
  }

  // serve/console/src/events.ts
  var SseParser = class {
    constructor() {
      __publicField(this, "buffer", "");
      __publicField(this, "id", null);
      __publicField(this, "type", "message");
      __publicField(this, "data", []);
    }
    /** Feed `chunk`; the events it completes. */
    push(chunk) {
      this.buffer += chunk;
      const events = [];
      let newline;
      while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (newline === this.buffer.length - 1 && this.buffer.endsWith("\r")) break;
        const line = this.buffer.slice(0, newline);
        const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
        this.buffer = this.buffer.slice(newline + width);
        if (line === "") {
          if (this.data.length) events.push({ id: this.id, type: this.type, data: this.data.join("\n") });
          this.type = "message";
          this.data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field2 = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field2 === "id") this.id = value;
        else if (field2 === "event") this.type = value;
        else if (field2 === "data") this.data.push(value);
      }
      return events;
    }
  };
  async function followEvents(api, id, seen, stop) {
    let last = null;
    while (!stop.aborted) {
      try {
        const headers = { accept: "text/event-stream" };
        if (last !== null) headers["last-event-id"] = last;
        const response = await api.raw(`/sessions/${encodeURIComponent(id)}/events`, headers, stop);
        if (!response.ok || !response.body) return;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = new SseParser();
        for (; ; ) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const event of parser.push(value)) {
            if (event.id !== null) last = event.id;
            seen(event);
          }
        }
      } catch (e) {
        if (stop.aborted) return;
        if (e instanceof Error && e.name !== "TypeError") throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, 1e3));
    }
  }

  // serve/console/src/sessions.ts
  async function sessionsPage(api, main, stop) {
    const listed = await api.get("/sessions");
    const rows = listed.sessions.map(
      (s) => h(
        "tr",
        { "data-session": s.id },
        h("td", {}, h("a", { href: `#/sessions/${encodeURIComponent(s.id)}` }, s.id)),
        h("td", {}, String(s.mode)),
        h("td", {}, s.agent ? `${s.agent.name} v${s.agent.version}` : ""),
        h("td", {}, s.owner ? String(s.owner) : ""),
        h("td", {}, String(s.lastActiveAt)),
        h("td", {}, s.busy ? "busy" : "")
      )
    );
    const mode = h("select", { id: "new-mode" }, h("option", { value: "live" }, "live"), h("option", { value: "dry-run" }, "dry-run"));
    const asOf = h("input", { type: "text", id: "new-as-of", placeholder: "asOf (RFC 3339), optional" });
    const status = h("span", { class: "status" });
    const create = async (event) => {
      event.preventDefault();
      const body = { mode: mode.value };
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
      rows.length ? h(
        "table",
        { class: "sessions" },
        h("thead", {}, h("tr", {}, ...["Session", "Mode", "Agent", "Owner", "Last active", ""].map((c) => h("th", {}, c)))),
        h("tbody", {}, ...rows)
      ) : h("p", {}, "No sessions.")
    );
  }
  async function sessionPage(api, main, id, stop) {
    const path = `/sessions/${encodeURIComponent(id)}`;
    const session = await api.get(path);
    const asOwner = session.owner ? { "toolhost-auth": JSON.stringify({ user: session.owner }) } : {};
    const artifacts = await api.get(`${path}/artifacts`, asOwner);
    const workspace = await api.get(`${path}/workspace`, asOwner);
    const entries = workspace.entries.map(
      (e) => h(
        "li",
        { "data-path": e.path, "data-kind": e.kind },
        e.kind === "file" ? h("button", { type: "button", class: "download", onclick: () => void save(api, `${path}/workspace/${e.path.split("/").map(encodeURIComponent).join("/")}`, e.path.split("/").pop(), asOwner) }, e.path) : h("code", {}, `${e.path}${e.kind === "dir" ? "/" : ""}`),
        e.kind === "file" ? ` ${e.size} bytes` : ` (${e.kind})`
      )
    );
    const events = h("ol", { class: "events", id: "events" });
    const files = artifacts.artifacts.map(
      (a) => h("li", {}, h("button", { type: "button", class: "download", onclick: () => void save(api, `${path}/artifacts/${encodeURIComponent(a.name)}`, a.name, asOwner) }, a.name), ` ${a.mediaType}, ${a.size} bytes, by ${a.tool ?? "?"}`)
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
      events
    );
    void followEvents(
      api,
      id,
      (event) => {
        let data = event.data;
        try {
          data = JSON.parse(event.data);
        } catch {
        }
        const item = h("li", { "data-event": event.id ?? "", "data-type": event.type }, h("b", {}, `#${event.id ?? "?"} ${event.type}`), jsonTree(data));
        item.querySelectorAll("details").forEach((d) => d.removeAttribute("open"));
        events.appendChild(item);
      },
      stop
    ).catch((e) => events.appendChild(h("li", { class: "error" }, `The stream stopped: ${e.message}`)));
  }
  async function save(api, path, name, extra = {}) {
    const response = await api.raw(path, extra);
    if (!response.ok) return;
    const url = URL.createObjectURL(new Blob([await response.arrayBuffer()], { type: "application/octet-stream" }));
    const link = h("a", { href: url, download: name });
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1e4);
  }

  // serve/console/src/form.ts
  function schemaForm(schema) {
    const slots = /* @__PURE__ */ new Map();
    const general = h("ul", { class: "errors", "data-pointer": "" });
    const root = field(schema ?? {}, "", "input", true, slots, "field");
    return {
      element: h("div", { class: "schema-form" }, general, root.element),
      read: () => root.read() ?? {},
      showErrors(errors) {
        for (const slot of [...slots.values(), general]) replace(slot);
        for (const error of errors) {
          const slot = slots.get(error.pointer) ?? general;
          slot.appendChild(h("li", {}, error.pointer ? `${error.pointer}: ` : "", error.message));
        }
      }
    };
  }
  function typeOf(schema) {
    const type = schema?.type;
    if (Array.isArray(type)) return type.find((t) => t !== "null");
    return type;
  }
  function field(schema, pointer, label, required, slots, id) {
    var _a;
    const errors = h("ul", { class: "errors", "data-pointer": pointer });
    slots.set(pointer, errors);
    const help = typeof schema?.description === "string" ? schema.description : null;
    const control = controlFor(schema, pointer, required, slots, id);
    (_a = control.element).id || (_a.id = id);
    const heading = [
      h("label", { for: control.element.id }, label, required ? h("span", { class: "required" }, " *") : null),
      help ? h("small", { class: "help" }, help) : null
    ];
    return {
      element: h("div", { class: "field", "data-pointer": pointer }, ...heading, control.element, errors),
      read: control.read
    };
  }
  function controlFor(schema, pointer, required, slots, id) {
    if (Array.isArray(schema?.enum)) return enumControl(schema.enum, schema.default);
    switch (typeOf(schema)) {
      case "string":
        return stringControl(schema, required);
      case "integer":
      case "number":
        return numberControl(schema, typeOf(schema) === "integer");
      case "boolean":
        return booleanControl(required);
      case "array":
        if (schema.items && typeof schema.items === "object" && !Array.isArray(schema.items)) {
          return arrayControl(schema, pointer, required, slots, id);
        }
        return jsonControl(schema, required);
      case "object":
        if (schema.properties && typeof schema.properties === "object") {
          return objectControl(schema, pointer, required, slots, id);
        }
        return jsonControl(schema, required);
      default:
        return jsonControl(schema, required);
    }
  }
  function stringControl(schema, required) {
    const long = (schema.maxLength ?? 0) > 200 || schema.format === "textarea";
    const input = long ? h("textarea", { rows: "4" }) : h("input", { type: "text" });
    if (typeof schema.default === "string") input.value = schema.default;
    return { element: input, read: () => input.value === "" && !required ? void 0 : input.value };
  }
  function numberControl(schema, integer) {
    const input = h("input", { type: "number", step: integer ? "1" : "any" });
    if (typeof schema.default === "number") input.value = String(schema.default);
    return {
      element: input,
      // A value that is not a number is sent as typed: the server names it.
      read: () => input.value === "" ? void 0 : Number.isNaN(Number(input.value)) ? input.value : Number(input.value)
    };
  }
  function booleanControl(required) {
    if (required) {
      const box = h("input", { type: "checkbox" });
      return { element: box, read: () => box.checked };
    }
    const select = h("select", {}, h("option", { value: "" }, "(not set)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
    return { element: select, read: () => select.value === "" ? void 0 : select.value === "true" };
  }
  function enumControl(values, fallback) {
    const select = h("select", {}, h("option", { value: "" }, "(choose)"));
    values.forEach((value, index) => {
      const chosen = fallback !== void 0 && JSON.stringify(value) === JSON.stringify(fallback);
      select.appendChild(h("option", { value: String(index), selected: chosen }, typeof value === "string" ? value : JSON.stringify(value)));
    });
    return { element: select, read: () => select.value === "" ? void 0 : values[Number(select.value)] };
  }
  function jsonControl(schema, required) {
    const box = h("textarea", { rows: "3", class: "json", placeholder: "JSON" });
    if (schema?.default !== void 0) box.value = JSON.stringify(schema.default);
    return {
      element: box,
      read: () => {
        if (box.value.trim() === "") return required ? null : void 0;
        return JSON.parse(box.value);
      }
    };
  }
  function objectControl(schema, pointer, required, slots, id) {
    const needed = new Set(Array.isArray(schema.required) ? schema.required : []);
    const fields = Object.entries(schema.properties).map(([name, property]) => ({
      name,
      field: field(property, `${pointer}/${escapePointer(name)}`, name, needed.has(name), slots, `${id}_${name.replace(/[^A-Za-z0-9_-]/g, "_")}`)
    }));
    return {
      element: h("fieldset", {}, ...fields.map((f) => f.field.element)),
      read: () => {
        const value = {};
        for (const { name, field: field2 } of fields) {
          const item = field2.read();
          if (item !== void 0) value[name] = item;
        }
        return !required && Object.keys(value).length === 0 ? void 0 : value;
      }
    };
  }
  function arrayControl(schema, pointer, required, slots, id) {
    const list = h("ol", { class: "items" });
    const items = [];
    let made = 0;
    const remove = (item) => {
      const index = items.indexOf(item);
      if (index < 0) return;
      forget(slots, item.row);
      items.splice(index, 1);
      item.row.remove();
      for (let i = index; i < items.length; i++) {
        repoint(slots, items[i].row, `${pointer}/${i + 1}`, `${pointer}/${i}`);
        const label = items[i].row.querySelector("label");
        if (label) label.firstChild.textContent = `item ${i + 1}`;
      }
    };
    const add = h("button", { type: "button", onclick: () => {
      const index = items.length;
      const itemField = field(schema.items, `${pointer}/${index}`, `item ${index + 1}`, true, slots, `${id}_${made++}`);
      const item = { field: itemField, row: h("li", {}) };
      item.row.append(itemField.element, h("button", { type: "button", class: "remove", onclick: () => remove(item) }, "remove"));
      items.push(item);
      list.appendChild(item.row);
    } }, "add item");
    return {
      element: h("div", { class: "array" }, list, add),
      read: () => !required && items.length === 0 ? void 0 : items.map((item) => item.field.read())
    };
  }
  function forget(slots, element) {
    element.querySelectorAll("ul.errors[data-pointer]").forEach((slot) => {
      const at = slot.dataset.pointer ?? "";
      if (slots.get(at) === slot) slots.delete(at);
    });
  }
  function repoint(slots, element, from, to) {
    element.querySelectorAll("[data-pointer]").forEach((node) => {
      const at = node.dataset.pointer ?? "";
      if (at !== from && !at.startsWith(`${from}/`)) return;
      const moved = to + at.slice(from.length);
      node.dataset.pointer = moved;
      if (node.matches("ul.errors") && slots.get(at) === node) {
        slots.delete(at);
        slots.set(moved, node);
      }
    });
  }
  function escapePointer(name) {
    return name.replace(/~/g, "~0").replace(/\//g, "~1");
  }

  // serve/console/src/tools.ts
  function agentQuery(agent, joiner = "?") {
    return agent ? `${joiner}agent=${encodeURIComponent(agent)}` : "";
  }
  async function toolsPage(api, main, agent, stop) {
    const listing = await api.get(`/tools?detail=true${agentQuery(agent, "&")}`);
    const agents = (await api.get("/agents")).agents.map((a) => String(a.name));
    const picker = h("select", { id: "agent" }, ...agents.map((name) => h("option", { value: name, selected: name === (listing.agent?.name ?? "default") }, name)));
    picker.addEventListener("change", () => {
      location.hash = `#/tools${picker.value === "default" ? "" : agentQuery(picker.value)}`;
    });
    const rows = listing.tools.map(
      (tool) => h(
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
        h("td", {}, tool.enabled === false ? "disabled" : "enabled")
      )
    );
    const failures = listing.failures ?? [];
    const unavailable = listing.unavailable ?? [];
    if (stop.aborted) return;
    replace(
      main,
      h("h2", {}, `Tools of ${listing.agent?.name ?? "the default agent"} v${listing.agent?.version ?? "?"}`),
      agents.length > 1 ? h("p", {}, h("label", { for: "agent" }, "Agent "), picker) : null,
      h(
        "table",
        { class: "tools" },
        h("thead", {}, h("tr", {}, ...["Tool", "Description", "Effect", "Permission", "Origin", "Grants", "Imports", "Lints", "tools.lock", "State"].map((c) => h("th", {}, c)))),
        h("tbody", {}, ...rows)
      ),
      failures.length || unavailable.length ? h(
        "section",
        { class: "failures", id: "failures" },
        h("h3", {}, "Not loaded"),
        h(
          "ul",
          {},
          ...failures.map((f) => h("li", {}, h("b", {}, String(f.tool ?? f.file ?? "?")), `: ${f.reason}`)),
          ...unavailable.map((u) => h("li", {}, JSON.stringify(u)))
        )
      ) : null
    );
  }
  function grantLines(grants) {
    if (!grants) return [];
    const lines = [];
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
  function ungranted(tool) {
    return (tool.imports ?? []).filter((i) => String(i.status).startsWith("NOT GRANTED"));
  }
  function lockText(lock) {
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
  function details(tool) {
    const imports = tool.imports ?? [];
    const lints = tool.lints ?? [];
    const missing = ungranted(tool).length;
    return h(
      "details",
      { class: "inspection", open: missing > 0 || lints.length > 0 },
      h("summary", {}, `What it may do: ${imports.length} imports${missing ? `, ${missing} not granted` : ""}, ${lints.length} lint findings`),
      h("p", {}, h("b", {}, "Grants: "), grantLines(tool.grants).join(" · ")),
      h("p", {}, h("b", {}, "tools.lock: "), lockText(tool.lock)),
      imports.length ? h("table", { class: "imports" }, ...imports.map((i) => h("tr", {}, h("td", {}, h("code", {}, String(i.import))), h("td", { class: String(i.status).startsWith("NOT") ? "warn" : "" }, String(i.status))))) : h("p", {}, "Imports nothing."),
      lints.length ? h("ul", { class: "lints" }, ...lints.map((l) => h("li", {}, h("code", {}, l.rule), ` ${l.message}`))) : null
    );
  }
  function origin(tool) {
    if (tool.custom) return "custom";
    if (tool.mcpServer) return `MCP server ${tool.mcpServer}`;
    return typeof tool.origin === "string" ? tool.origin : JSON.stringify(tool.origin ?? "file");
  }
  async function tryPage(api, main, name, agent, stop) {
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
      h("option", { value: "existing" }, "existing session…")
    );
    const known = (await api.get("/sessions")).sessions.filter((s) => !agent || s.agent?.name === agent);
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
    const submit = async (event) => {
      event.preventDefault();
      replace(output);
      let input;
      try {
        input = rawToggle.checked ? JSON.parse(raw.value) : form.read();
      } catch (e) {
        replace(status, `The input is not valid JSON: ${e.message}`);
        return;
      }
      run.disabled = true;
      replace(status, "calling…");
      try {
        const body = { input, includeTrace: true };
        const chosen = await sessionFor(api, session.value, sessionId.value.trim(), { agent, asOf: asOf.value.trim() });
        if (chosen) body.sessionId = chosen;
        else if (agent) body.agent = agent;
        let answer2 = await api.request("POST", `/tools/${encodeURIComponent(name)}`, body);
        while (answer2.status === 202 && !stop.aborted) {
          const callId = String(answer2.body.callId);
          status.dataset.call = callId;
          replace(status, `call ${callId} is ${String(answer2.body.status).replace(/_/g, " ")}`, answer2.body.status === "awaiting_approval" ? h("span", {}, " — ", h("a", { href: "#/approvals" }, "approve it")) : null);
          answer2 = await api.request("GET", `/calls/${encodeURIComponent(callId)}?wait=20&trace=true`);
        }
        if (answer2.status === 200) {
          form.showErrors([]);
          replace(status, chosen ? `done in session ${chosen}` : "done");
          replace(output, renderEnvelope(answer2.body));
        } else {
          const errors = answer2.body?.error?.errors ?? [];
          form.showErrors(errors);
          replace(status, describeError(answer2));
        }
      } catch (e) {
        replace(status, e.message);
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
        run
      ),
      status,
      output
    );
  }
  async function sessionFor(api, choice, typed, made) {
    if (choice === "scratch") return null;
    if (choice === "existing") {
      if (!typed) throw new Error("Type or pick the id of the session to call in.");
      return typed;
    }
    const body = { mode: choice === "dry-run" ? "dry-run" : "live" };
    if (made.agent) body.agent = made.agent;
    if (made.asOf) body.asOf = made.asOf;
    const answer = await api.request("POST", "/sessions", body);
    if (answer.status !== 201) throw new Error(`The session was not made: ${describeError(answer)}`);
    return answer.body.id;
  }

  // serve/console/src/main.ts
  async function start() {
    const main = document.getElementById("main");
    const nav = document.getElementById("nav");
    if (!main || !nav) return;
    const health = await (await fetch("/healthz", { credentials: "omit" })).json();
    const api = new Api(String(health.slug));
    replace(
      nav,
      h("a", { href: "#/tools" }, "Tools"),
      h("a", { href: "#/sessions" }, "Sessions"),
      h("a", { href: "#/approvals" }, "Approvals"),
      h("span", { class: "slug" }, `/${api.slug}/v1`)
    );
    let leaving = new AbortController();
    const show = async () => {
      leaving.abort();
      leaving = new AbortController();
      const [path, query] = location.hash.replace(/^#\/?/, "").split("?", 2);
      const route = path.split("/").map(decodeURIComponent);
      const agent = new URLSearchParams(query ?? "").get("agent");
      try {
        const stop = leaving.signal;
        if (route[0] === "tools" && route[1]) await tryPage(api, main, route[1], agent, stop);
        else if (route[0] === "sessions" && route[1]) await sessionPage(api, main, route[1], stop);
        else if (route[0] === "sessions") await sessionsPage(api, main, stop);
        else if (route[0] === "approvals") await approvalsPage(api, main, stop);
        else await toolsPage(api, main, agent, stop);
      } catch (e) {
        if (e instanceof LoginNeeded) loginForm(api, main, show, api.logout());
        else replace(main, h("p", { class: "error" }, e.message));
      }
    };
    window.addEventListener("hashchange", show);
    await show();
    performance.mark("console-ready");
  }
  function loginForm(api, main, then, refused) {
    const token = h("input", { type: "password", id: "token", autocomplete: "off" });
    const submit = (event) => {
      event.preventDefault();
      api.login(token.value);
      void then();
    };
    replace(
      main,
      h(
        "form",
        { id: "login", onsubmit: submit },
        h("h2", {}, "Log in"),
        h("p", {}, "This server needs its token ([server] token). It is kept in this page's memory only."),
        refused ? h("p", { class: "error" }, "The server did not accept that token.") : null,
        h("label", { for: "token" }, "Token "),
        token,
        " ",
        h("button", { type: "submit" }, "Log in")
      )
    );
  }
  void start();
})();
