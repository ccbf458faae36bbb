/** Which of a request's tools the model may be offered. */
import type { FunctionTool, ToolChoice } from "./types.ts";

/** The tools the model may call: all of `tools`, or those an `allowed` tool choice names. */
export function offeredTools(req: { tools?: FunctionTool[]; toolChoice?: ToolChoice }): FunctionTool[] | undefined {
  const choice = req.toolChoice;
  if (!req.tools || choice?.type !== "allowed") return req.tools;
  return req.tools.filter((t) => choice.names.includes(t.name));
}
