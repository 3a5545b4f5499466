#!/usr/bin/env node
// Builds a TypeScript/JavaScript tool into a toolhost component
// (wasm32-wasip2, world `toolhost:tool/plugin`) with either engine:
//
//   node sdk/js/bin/build.mjs plugins/ts/ts_counter/tool.ts -o tools/ts_counter.wasm \
//        [--engine quickjs|starlingmonkey] [--wit wit] [--minify] [--opt-size] [--keep-js FILE]
//
// 1. esbuild bundles the tool and this SDK into one ES module; the SDK's
//    `toolhost/engine` import picks the engine's binding conventions.
// 2. starlingmonkey: @bytecodealliance/componentize-js against the WIT world
//    `plugin` (the `fetch-event` feature off: tools export no HTTP handler).
//    quickjs: componentize-qjs --sync against a copy of the WIT whose WASI
//    0.2.x packages are renamed to 9.0.x, then the names are put back to a
//    0.2.x version in the component (see README.md, "QuickJS and wasi:http").
//
// `toolhost build` runs it with --wit and --deps (the node_modules holding
// esbuild, componentize-js and componentize-qjs).
import { mkdtemp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sdkRoot = resolve(here, "..");
const repoRoot = resolve(sdkRoot, "../..");

function usage(message) {
  if (message) console.error(`error: ${message}`);
  console.error(
    "usage: build.mjs TOOL.ts [-o OUT.wasm] [--engine quickjs|starlingmonkey] [--wit DIR] [--world NAME]\n" +
      "                 [--minify] [--opt-size] [--keep-js FILE] [--deps NODE_MODULES]",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const opts = { engine: "quickjs", wit: join(repoRoot, "wit"), world: "plugin", minify: false, optSize: false };
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const value = () => args[++i] ?? usage(`${arg} needs a value`);
  if (arg === "-o" || arg === "--out") opts.out = value();
  else if (arg === "--engine" || arg === "-e") opts.engine = value();
  else if (arg === "--wit") opts.wit = value();
  else if (arg === "--world") opts.world = value();
  else if (arg === "--minify") opts.minify = true;
  else if (arg === "--opt-size") opts.optSize = true;
  else if (arg === "--keep-js") opts.keepJs = value();
  else if (arg === "--deps") opts.deps = value();
  else if (arg === "-h" || arg === "--help") usage();
  else if (arg.startsWith("-")) usage(`unknown option ${arg}`);
  else if (!opts.entry) opts.entry = arg;
  else usage(`unexpected argument ${arg}`);
}
if (!opts.entry) usage("no tool file");
const ENGINES = { quickjs: "quickjs", qjs: "quickjs", starlingmonkey: "starlingmonkey", sm: "starlingmonkey" };
const engine = ENGINES[opts.engine] ?? usage(`unknown engine ${opts.engine}`);
const entry = resolve(opts.entry);
const out = resolve(opts.out ?? `${basename(dirname(entry))}.wasm`);
const witDir = resolve(opts.wit);
const deps = resolve(opts.deps ?? process.env.TOOLHOST_JS_DEPS ?? join(repoRoot, "plugins/ts/node_modules"));

const load = (name, file) => import(pathToFileURL(join(deps, name, file)).href);

const work = await mkdtemp(join(tmpdir(), "toolhost-js-"));
try {
  const started = Date.now();
  // 1. Bundle.
  const esbuild = await load("esbuild", "lib/main.js").then((m) => m.default ?? m);
  const entryModule = join(work, "entry.js");
  await writeFile(
    entryModule,
    `import definition from ${JSON.stringify(entry)};\n` +
      `import { exportPrompts, exportResources, exportTool } from "toolhost";\n` +
      `export const tool = exportTool(definition);\n` +
      `export const prompts = exportPrompts(definition.prompts);\n` +
      `export const resources = exportResources(definition.resources, definition.resourceTemplates);\n`,
  );
  const plugin = {
    name: "toolhost",
    setup(build) {
      build.onResolve({ filter: /^toolhost$/ }, () => ({ path: join(sdkRoot, "src/index.ts") }));
      build.onResolve({ filter: /^toolhost\/engine$/ }, () => ({ path: join(sdkRoot, `src/engine/${engine}.ts`) }));
      // WIT interfaces (`wasi:…`, `toolhost:…`) are provided by the engine.
      build.onResolve({ filter: /^[a-z][a-z0-9-]*:/ }, (a) => ({ path: a.path, external: true }));
    },
  };
  const bundled = await esbuild.build({
    entryPoints: [entryModule],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    minify: opts.minify,
    legalComments: "none",
    nodePaths: [deps],
    mainFields: ["module", "main"],
    conditions: ["import", "default"],
    plugins: [plugin],
    logLevel: "warning",
  });
  const js = bundled.outputFiles[0].text;
  if (opts.keepJs) await writeFile(resolve(opts.keepJs), js);
  const bundledAt = Date.now();

  // 2. Componentize.
  let component;
  if (engine === "starlingmonkey") {
    const { componentize } = await load("@bytecodealliance/componentize-js", "src/componentize.js");
    const result = await componentize(js, {
      witPath: witDir,
      worldName: opts.world,
      sourceName: "tool.js",
      disableFeatures: ["fetch-event"],
    });
    component = Buffer.from(result.component);
  } else {
    const qjs = await load("componentize-qjs", "index.js").then((m) => m.default ?? m);
    const shifted = join(work, "wit");
    const versions = await shiftWit(witDir, shifted);
    const result = await qjs.componentize({
      witPath: shifted,
      // The bundle's WIT imports follow the renamed packages.
      jsSource: js.replace(/(["']wasi:[^"'@]+@)0\.2\.(\d+)(?=["'])/g, "$19.0.$2"),
      world: opts.world,
      sync: true,
      optSize: opts.optSize,
    });
    component = unshift(Buffer.from(result.component), versions);
  }
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, component);
  const done = Date.now();
  console.log(
    `${out}: ${component.length} bytes (${engine}; bundle ${js.length} bytes in ${bundledAt - started} ms, ` +
      `componentize ${done - bundledAt} ms)`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}

// QuickJS and wasi:http: componentize-qjs pre-initializes the component in
// Wasmtime with every import it does not know stubbed by a trap, and then
// Wasmtime's real WASI 0.2 on top. It has no wasi:http, so the stubbed
// `wasi:http/types` carries its own `input-stream`, which no longer matches
// the real `wasi:io/streams` one, and pre-initialization fails ("mismatched
// resource types"). Renaming the WIT's WASI 0.2.x packages to 9.0.x (WASI's
// only: the toolhost contract is 0.2.x too) makes all of them stubs
// (consistent with each other) for that one step. The names are then put
// back, same length, to a 0.2 version one below (`0.2.12` becomes
// `0.2.11`): the runtime's own WASI adapter already imports the `0.2.12`
// names, and a component may not import one name twice. Hosts match 0.2.x
// imports semver-compatibly, so `0.2.11` binds to the host's 0.2.12.
async function shiftWit(from, to) {
  const versions = new Map();
  const shift = (text) =>
    text.replace(/(wasi:[\w-]+(?:\/[\w-]+)?)@0\.2\.(\d+)(?![-+\w])/g, (_, name, patch) => {
      const shifted = `9.0.${patch}`;
      let back = String(Number(patch) - 1);
      if (back.length !== patch.length || Number(patch) === 0) back = String(Number(patch) + 1);
      if (back.length !== patch.length) throw new Error(`cannot shift WASI version 0.2.${patch}`);
      versions.set(shifted, `0.2.${back}`);
      return `${name}@${shifted}`;
    });
  async function copy(src, dst) {
    await mkdir(dst, { recursive: true });
    for (const entry of await readdir(src)) {
      const s = join(src, entry);
      const d = join(dst, entry);
      if ((await stat(s)).isDirectory()) await copy(s, d);
      else if (entry.endsWith(".wit")) await writeFile(d, shift(await readFile(s, "utf8")));
    }
  }
  await copy(from, to);
  return versions;
}

function unshift(bytes, versions) {
  for (const [shifted, back] of versions) {
    const from = Buffer.from(`@${shifted}`);
    const to = Buffer.from(`@${back}`);
    let at = 0;
    while ((at = bytes.indexOf(from, at)) !== -1) {
      to.copy(bytes, at);
      at += from.length;
    }
  }
  if (bytes.includes(Buffer.from("@9.0."))) throw new Error("a shifted WASI version is left in the component");
  return bytes;
}
