/** Drops a WIT resource handle now (both engines implement `Symbol.dispose`). */
export function dispose(resource: any): void {
  if (!resource) return;
  const sym: symbol | undefined = (Symbol as any).dispose;
  const f = (sym && resource[sym]) || resource[Symbol.for("dispose")] || resource[Symbol.for("nodejs.dispose")];
  if (typeof f === "function") {
    try {
      f.call(resource);
    } catch {
      // Already dropped or moved: nothing to do.
    }
  }
}
