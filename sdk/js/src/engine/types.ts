/**
 * The seam between the SDK and a JavaScript engine's WIT bindings.
 *
 * StarlingMonkey (componentize-js) and QuickJS (componentize-qjs) bind the
 * same WIT interfaces with slightly different conventions: how an interface
 * is imported, how `option::none` looks (`undefined` vs `null`) and how
 * 64-bit integers are passed (`bigint` vs `number`). Each engine module
 * implements this interface; the build picks one (`--engine`).
 */
export interface Engine {
  /** `"starlingmonkey"` or `"quickjs"`. */
  readonly name: "starlingmonkey" | "quickjs";
  /** The value the engine uses for `option::none` when lowering. */
  readonly none: null | undefined;
  /** A JS number as the engine's `u64`/`s64` argument. */
  int64(value: number): number | bigint;
  /** `toolhost:tool/log` */
  log: { log(level: string, message: string): void };
  /** `toolhost:tool/progress` */
  progress: { report(done: number, total: number | null | undefined, message: string | null | undefined): void };
  /** `toolhost:tool/resource-updates` (throws the host's message on refusal) */
  resourceUpdates: { updated(uri: string): void };
  /**
   * `toolhost:tool/ask`: each returns the answer as the engine lifts it
   * (`{ tag, val }` variants, string enums) or throws the host's refusal.
   * `askAll` takes `keyed-question` records (`{ key, question: { tag, val? } }`)
   * and returns the `answer` variants in the order asked.
   */
  ask: {
    elicit(message: string, requestedSchema: string): any;
    sample(messages: any[], options: any): any;
    askAll(questions: Array<{ key: string; question: any }>): any[];
  };
  /** `toolhost:tool/context`: each returns the path, or `none`. */
  context: { workspaceDir(): string | null | undefined; stateRoot(): string | null | undefined };
  /** `toolhost:tool/artifacts`: each returns the record(s) as the engine lifts them, or throws the host's refusal. */
  artifacts: {
    save(name: string, mediaType: string, data: Uint8Array, tags: string[]): any;
    saveFile(name: string, path: string, mediaType: string, tags: string[]): any;
    listArtifacts(): any[];
  };
  /** `toolhost:tool/sessions`: each returns the record(s) as the engine lifts them, or throws the host's refusal. */
  sessions: {
    getSession(channel: string, id: string): any;
    send(channel: string, message: string, options: any): any;
  };
  /** `toolhost:tool/reminders`: each returns what the engine lifts, or throws the host's refusal. */
  reminders: {
    schedule(when: any, action: any): any;
    listReminders(): any[];
    cancelReminder(id: string): boolean;
  };
  /** `toolhost:tool/metrics`: each throws the host's refusal. */
  metrics: {
    counterAdd(name: string, value: number, labels: Array<[string, string]>): void;
    histogramRecord(name: string, value: number, labels: Array<[string, string]>): void;
  };
  /** `wasi:keyvalue/store` */
  kvStore: { open(name: string): any };
  /** `wasi:keyvalue/atomics` */
  kvAtomics: { increment(bucket: any, key: string, delta: number | bigint): number | bigint };
  /** `wasi:http/types` */
  httpTypes: any;
  /** `wasi:http/outgoing-handler` */
  httpOutgoing: { handle(request: any, options: any): any };
  /** `wasi:filesystem/preopens` */
  fsPreopens: { getDirectories(): Array<[any, string]> };
  /** `wasi:io/streams` error shapes are engine-neutral; kept for completeness. */
}
