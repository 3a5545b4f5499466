// The WIT interfaces are provided by the component engine at build time.
declare module "toolhost:tool/log@0.2.2";
declare module "toolhost:tool/progress@0.2.2";
declare module "toolhost:tool/resource-updates@0.2.2";
declare module "toolhost:tool/ask@0.2.2";
declare module "toolhost:tool/context@0.2.2";
declare module "toolhost:tool/artifacts@0.2.2";
declare module "toolhost:tool/metrics@0.2.2";
declare module "toolhost:tool/sessions@0.2.2";
declare module "toolhost:tool/reminders@0.2.2";
declare module "wasi:keyvalue/store@0.2.0-draft2";
declare module "wasi:keyvalue/atomics@0.2.0-draft2";
declare module "wasi:http/types@0.2.12";
declare module "wasi:http/outgoing-handler@0.2.12";
declare module "wasi:filesystem/preopens@0.2.12";
declare module "toolhost/engine" {
  export const engine: import("./types.ts").Engine;
}
