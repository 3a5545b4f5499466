// The console's entry point: learns the API's slug from `/healthz`, asks
// for the token when the server wants one (kept in memory only), and shows
// the page the address's fragment names.

import { Api, LoginNeeded } from "./api";
import { h, replace } from "./dom";
import { approvalsPage } from "./approvals";
import { sessionPage, sessionsPage } from "./sessions";
import { toolsPage, tryPage } from "./tools";

async function start(): Promise<void> {
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
    h("span", { class: "slug" }, `/${api.slug}/v1`),
  );
  // What the page shown follows (a stream, a timer) stops when another is shown.
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
      else replace(main, h("p", { class: "error" }, (e as Error).message));
    }
  };
  window.addEventListener("hashchange", show);
  await show();
  // The first page is on screen: what `bench console_load` measures.
  performance.mark("console-ready");
}

/** Ask for the server's token (saying so when the one given was refused),
 * then show the page again. */
function loginForm(api: Api, main: HTMLElement, then: () => Promise<void>, refused: boolean): void {
  const token = h("input", { type: "password", id: "token", autocomplete: "off" });
  const submit = (event: Event) => {
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
      h("button", { type: "submit" }, "Log in"),
    ),
  );
}

void start();
