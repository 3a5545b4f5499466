/**
 * `ts_greet`: asks the person using the client their name, then the
 * client's model for a one-line greeting (the TypeScript twin of `greet`).
 *
 * Needs `ask = ["user", "model"]` in the tool's grant; the call's timeout
 * stops while it waits for each answer.
 */
import { defineTool, elicit, prompt, sample } from "toolhost";

const FORM = {
  type: "object",
  properties: { name: { type: "string", title: "Your name", minLength: 1 } },
  required: ["name"],
};

export default defineTool({
  description: prompt`
    Greet the person using the client: ask their name, then ask the model
    for a one-line greeting.
  `,
  effect: "read",
  execute() {
    const answer = elicit("What should I call you?", FORM);
    if (answer.action !== "accept") return "No name, no greeting.";
    const reply = sample(`Write a one-line greeting for ${answer.content?.name}.`, { maxTokens: 60 });
    return reply.content.type === "text" ? reply.content.text : "(the model answered without text)";
  },
});
