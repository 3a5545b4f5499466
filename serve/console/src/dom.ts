// Building the page from elements and text nodes only: nothing a tool or
// the server supplies is ever parsed as HTML.

/** What an element may hold: elements, text (set as a text node), nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes to set; `on*` keys take listeners, others are set as text. */
export type Attrs = Record<string, string | boolean | EventListener | undefined>;

/** An element `tag` with `attrs` and `children`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : value);
    }
  }
  append(element, ...children);
  return element;
}

/** Add `children` to `parent`, text as text nodes. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replace everything `parent` holds with `children`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}
