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
  const root = field(schema ?? {}, "", "input", true, slots);
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

function field(schema: any, pointer: string, label: string, required: boolean, slots: Slots): Field {
  const errors = h("ul", { class: "errors", "data-pointer": pointer });
  slots.set(pointer, errors);
  const help = typeof schema?.description === "string" ? schema.description : null;
  const control = controlFor(schema, pointer, required, slots);
  const id = `field${pointer.replace(/[^A-Za-z0-9_-]/g, "_")}`;
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

function controlFor(schema: any, pointer: string, required: boolean, slots: Slots): Field {
  if (Array.isArray(schema?.enum)) return enumControl(schema.enum, required);
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
        return arrayControl(schema, pointer, slots);
      }
      return jsonControl(schema, required);
    case "object":
      if (schema.properties && typeof schema.properties === "object") {
        return objectControl(schema, pointer, slots);
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

function enumControl(values: unknown[], required: boolean): Field {
  const select = h("select", {}, required ? null : h("option", { value: "" }, "(not set)"));
  values.forEach((value, index) => {
    select.appendChild(h("option", { value: String(index) }, typeof value === "string" ? value : JSON.stringify(value)));
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

function objectControl(schema: any, pointer: string, slots: Slots): Field {
  const needed = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(schema.properties).map(([name, property]) => ({
    name,
    field: field(property, `${pointer}/${escapePointer(name)}`, name, needed.has(name), slots),
  }));
  return {
    element: h("fieldset", {}, ...fields.map((f) => f.field.element)),
    read: () => {
      const value: Record<string, unknown> = {};
      for (const { name, field } of fields) {
        const item = field.read();
        if (item !== undefined) value[name] = item;
      }
      return value;
    },
  };
}

function arrayControl(schema: any, pointer: string, slots: Slots): Field {
  const list = h("ol", { class: "items" });
  const items: Field[] = [];
  const redraw = () => {
    replace(list);
    items.forEach((item, index) => {
      const remove = h("button", { type: "button", class: "remove", onclick: () => { items.splice(index, 1); redraw(); } }, "remove");
      list.appendChild(h("li", {}, item.element, remove));
    });
  };
  const add = h("button", { type: "button", onclick: () => {
    items.push(field(schema.items, `${pointer}/${items.length}`, `item ${items.length + 1}`, true, slots));
    redraw();
  } }, "add item");
  return {
    element: h("div", { class: "array" }, list, add),
    read: () => items.map((item) => item.read()),
  };
}

/** `name` as one JSON pointer segment. */
function escapePointer(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}
