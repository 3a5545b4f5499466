/**
 * `{{name}}`: greets someone. Replace this with what the tool does.
 */
import { defineTool, prompt } from "toolhost";

interface Input {
  name: string;
}

export default defineTool<Input>({
  description: prompt`
    Greet someone by name. Returns the greeting as text; it changes
    nothing, so it is safe to call at any time.
  `,
  inputSchema: {
    type: "object",
    properties: {
      name: {
        type: "string",
        minLength: 1,
        maxLength: 100,
        description: "The name of the person to greet.",
      },
    },
    required: ["name"],
  },
  effect: "read",
  execute(input) {
    return `Hello, ${input.name}!`;
  },
});
