import { parentPort } from "node:worker_threads";
import { type FieldTemplate, type RenderLimits, type RenderResult, renderFields } from "./render.ts";

/**
 * A render thread (render-pool.ts starts it): renders the fields of one step at a time, with the
 * same budget as on the event loop. The pool ends the thread when a render outruns its time anyway.
 */

export interface RenderRequest {
  id: number;
  fields: FieldTemplate[];
  data: Record<string, unknown>;
  limits: RenderLimits;
}

export interface RenderResponse {
  id: number;
  results: RenderResult[];
}

const port = parentPort;
if (port) {
  port.on("message", (request: RenderRequest) => {
    const response: RenderResponse = {
      id: request.id,
      results: renderFields(request.fields, request.data, request.limits),
    };
    port.postMessage(response);
  });
  port.postMessage("ready");
}
