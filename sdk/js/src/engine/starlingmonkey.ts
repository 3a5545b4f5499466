// WIT bindings as componentize-js (StarlingMonkey) exposes them: named
// exports per interface, `undefined` for none, `bigint` for 64-bit integers.
import * as log from "toolhost:tool/log@0.2.2";
import * as progress from "toolhost:tool/progress@0.2.2";
import * as resourceUpdates from "toolhost:tool/resource-updates@0.2.2";
import * as ask from "toolhost:tool/ask@0.2.2";
import * as context from "toolhost:tool/context@0.2.2";
import * as artifacts from "toolhost:tool/artifacts@0.2.2";
import * as metrics from "toolhost:tool/metrics@0.2.2";
import * as sessions from "toolhost:tool/sessions@0.2.2";
import * as reminders from "toolhost:tool/reminders@0.2.2";
import * as kvStore from "wasi:keyvalue/store@0.2.0-draft2";
import * as kvAtomics from "wasi:keyvalue/atomics@0.2.0-draft2";
import * as httpTypes from "wasi:http/types@0.2.12";
import * as httpOutgoing from "wasi:http/outgoing-handler@0.2.12";
import * as fsPreopens from "wasi:filesystem/preopens@0.2.12";
import type { Engine } from "./types.ts";
import { decodeUtf8, encodeUtf8 } from "../utf8.ts";

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/**
 * `atomics.increment`, around ComponentizeJS issue #343: 0.23 aborts the
 * instance when it lowers a negative `s64` argument. A negative delta is
 * applied by compare-and-swap instead, over the host's counter encoding
 * (the value as decimal text).
 */
function increment(bucket: any, key: string, delta: bigint): bigint {
  if (delta >= 0n) return (kvAtomics as any).increment(bucket, key, delta);
  for (;;) {
    const cas = (kvAtomics as any).Cas.new(bucket, key);
    const current: Uint8Array | undefined = cas.current();
    const text = current === undefined ? "0" : decodeUtf8(current);
    if (!/^-?[0-9]+$/.test(text)) {
      throw new Error(`the value of ${JSON.stringify(key)} is not a counter (decimal text): ${JSON.stringify(text)}`);
    }
    const next = BigInt(text) + delta;
    if (next < I64_MIN || next > I64_MAX) {
      throw new Error(`incrementing ${text} by ${delta} overflows i64`);
    }
    try {
      (kvAtomics as any).swap(cas, encodeUtf8(next.toString()));
      return next;
    } catch (err) {
      if ((err as any)?.payload?.tag !== "cas-failed") throw err;
    }
  }
}

export const engine: Engine = {
  name: "starlingmonkey",
  none: undefined,
  int64: (value: number) => BigInt(Math.trunc(value)),
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
  kvAtomics: { increment },
  httpTypes,
  httpOutgoing: httpOutgoing as any,
  fsPreopens: fsPreopens as any,
};
