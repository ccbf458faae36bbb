/** A real edge agent (the generated tiny GGUF model on llama.cpp) in a process of its own, so the fault bench can SIGKILL it; reports `{ address }` over IPC. */
import { startTinyEdgeAgent } from "../../test/support/tiny-edge-agent.ts";

const agent = await startTinyEdgeAgent();
process.send?.({ address: agent.address });
