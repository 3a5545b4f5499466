// WIT bindings as componentize-qjs (QuickJS) exposes them: one default
// export per interface, `null` for none, `number` for 64-bit integers.
import log from "toolhost:tool/log@0.2.2";
import progress from "toolhost:tool/progress@0.2.2";
import resourceUpdates from "toolhost:tool/resource-updates@0.2.2";
import ask from "toolhost:tool/ask@0.2.2";
import context from "toolhost:tool/context@0.2.2";
import artifacts from "toolhost:tool/artifacts@0.2.2";
import metrics from "toolhost:tool/metrics@0.2.2";
import sessions from "toolhost:tool/sessions@0.2.2";
import reminders from "toolhost:tool/reminders@0.2.2";
import kvStore from "wasi:keyvalue/store@0.2.0-draft2";
import kvAtomics from "wasi:keyvalue/atomics@0.2.0-draft2";
import httpTypes from "wasi:http/types@0.2.12";
import httpOutgoing from "wasi:http/outgoing-handler@0.2.12";
import fsPreopens from "wasi:filesystem/preopens@0.2.12";
import type { Engine } from "./types.ts";

export const engine: Engine = {
  name: "quickjs",
  none: null,
  int64: (value: number) => Math.trunc(value),
  log: log as any,
  progress: progress as any,
  resourceUpdates: resourceUpdates as any,
  ask: ask as any,
  context: context as any,
  artifacts: artifacts as any,
  metrics: metrics as any,
  sessions: sessions as any,
  reminders: reminders as any,
  kvStore: kvStore as any,
  kvAtomics: kvAtomics as any,
  httpTypes,
  httpOutgoing: httpOutgoing as any,
  fsPreopens: fsPreopens as any,
};
