// A form generated from a tool's input schema: strings, numbers, enums,
// booleans, arrays and nested objects, each with its description as help
// and the server's validation errors shown beside it. What the form cannot
// express (oneOf, untyped values) is a JSON box for that field.

import { Child, h, replace } from "./dom";

/** One validation error as the API reports it (`error.errors`). */
export interface InputError {
  pointer: string;
  message: string;
}

/** A generated form: its element, the value it holds, and its errors. */
export interface SchemaForm {
  element: HTMLElement;
  /** The value the fields hold; throws when a JSON box does not parse. */
  read(): unknown;
  /** Show `errors` beside their fields (the rest above the form). */
  showErrors(errors: InputError[]): void;
}

interface Field {
  element: HTMLElement;
  /** The field's value; `undefined` leaves it out of its object. */
  read(): unknown;
}

/** Where each field shows its errors, by JSON pointer. */
type Slots = Map<string, HTMLElement>;

/** A form for `schema`. */
export function schemaForm(schema: any): SchemaForm {
  const slots: Slots = new Map();
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
    },
  };
}

function typeOf(schema: any): string | undefined {
  const type = schema?.type;
  if (Array.isArray(type)) return type.find((t: string) => t !== "null");
  return type;
}

/** The field for `schema` at `pointer`; its control's element id is `id`. */
function field(schema: any, pointer: string, label: string, required: boolean, slots: Slots, id: string): Field {
  const errors = h("ul", { class: "errors", "data-pointer": pointer });
  slots.set(pointer, errors);
  const help = typeof schema?.description === "string" ? schema.description : null;
  const control = controlFor(schema, pointer, required, slots, id);
  control.element.id ||= id;
  const heading: Child[] = [
    h("label", { for: control.element.id }, label, required ? h("span", { class: "required" }, " *") : null),
    help ? h("small", { class: "help" }, help) : null,
  ];
  return {
    element: h("div", { class: "field", "data-pointer": pointer }, ...heading, control.element, errors),
    read: control.read,
  };
}

function controlFor(schema: any, pointer: string, required: boolean, slots: Slots, id: string): Field {
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

function stringControl(schema: any, required: boolean): Field {
  const long = (schema.maxLength ?? 0) > 200 || schema.format === "textarea";
  const input = long ? h("textarea", { rows: "4" }) : h("input", { type: "text" });
  if (typeof schema.default === "string") input.value = schema.default;
  return { element: input, read: () => (input.value === "" && !required ? undefined : input.value) };
}

function numberControl(schema: any, integer: boolean): Field {
  const input = h("input", { type: "number", step: integer ? "1" : "any" });
  if (typeof schema.default === "number") input.value = String(schema.default);
  return {
    element: input,
    // A value that is not a number is sent as typed: the server names it.
    read: () => (input.value === "" ? undefined : Number.isNaN(Number(input.value)) ? input.value : Number(input.value)),
  };
}

function booleanControl(required: boolean): Field {
  if (required) {
    const box = h("input", { type: "checkbox" });
    return { element: box, read: () => box.checked };
  }
  const select = h("select", {}, h("option", { value: "" }, "(not set)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  return { element: select, read: () => (select.value === "" ? undefined : select.value === "true") };
}

function enumControl(values: unknown[], fallback: unknown): Field {
  // Nothing is chosen for the user: a blank first option unless the schema
  // names a default.
  const select = h("select", {}, h("option", { value: "" }, "(choose)"));
  values.forEach((value, index) => {
    const chosen = fallback !== undefined && JSON.stringify(value) === JSON.stringify(fallback);
    select.appendChild(h("option", { value: String(index), selected: chosen }, typeof value === "string" ? value : JSON.stringify(value)));
  });
  return { element: select, read: () => (select.value === "" ? undefined : values[Number(select.value)]) };
}

function jsonControl(schema: any, required: boolean): Field {
  const box = h("textarea", { rows: "3", class: "json", placeholder: "JSON" });
  if (schema?.default !== undefined) box.value = JSON.stringify(schema.default);
  return {
    element: box,
    read: () => {
      if (box.value.trim() === "") return required ? null : undefined;
      return JSON.parse(box.value);
    },
  };
}

function objectControl(schema: any, pointer: string, required: boolean, slots: Slots, id: string): Field {
  const needed = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(schema.properties).map(([name, property]) => ({
    name,
    field: field(property, `${pointer}/${escapePointer(name)}`, name, needed.has(name), slots, `${id}_${name.replace(/[^A-Za-z0-9_-]/g, "_")}`),
  }));
  return {
    element: h("fieldset", {}, ...fields.map((f) => f.field.element)),
    read: () => {
      const value: Record<string, unknown> = {};
      for (const { name, field } of fields) {
        const item = field.read();
        if (item !== undefined) value[name] = item;
      }
      // An optional object none of whose fields was set is left out.
      return !required && Object.keys(value).length === 0 ? undefined : value;
    },
  };
}

function arrayControl(schema: any, pointer: string, required: boolean, slots: Slots, id: string): Field {
  const list = h("ol", { class: "items" });
  const items: { field: Field; row: HTMLElement }[] = [];
  let made = 0;
  const remove = (item: { field: Field; row: HTMLElement }) => {
    const index = items.indexOf(item);
    if (index < 0) return;
    forget(slots, item.row);
    items.splice(index, 1);
    item.row.remove();
    // The items after it move up one: their errors' pointers and labels too.
    for (let i = index; i < items.length; i++) {
      repoint(slots, items[i].row, `${pointer}/${i + 1}`, `${pointer}/${i}`);
      const label = items[i].row.querySelector("label");
      if (label) label.firstChild!.textContent = `item ${i + 1}`;
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
    read: () => (!required && items.length === 0 ? undefined : items.map((item) => item.field.read())),
  };
}

/** Drop the error slots under `element` (a removed item). */
function forget(slots: Slots, element: HTMLElement): void {
  element.querySelectorAll<HTMLElement>("ul.errors[data-pointer]").forEach((slot) => {
    const at = slot.dataset.pointer ?? "";
    if (slots.get(at) === slot) slots.delete(at);
  });
}

/** Move every pointer under `element` from `from` to `to`. */
function repoint(slots: Slots, element: HTMLElement, from: string, to: string): void {
  element.querySelectorAll<HTMLElement>("[data-pointer]").forEach((node) => {
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

/** `name` as one JSON pointer segment. */
function escapePointer(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}
