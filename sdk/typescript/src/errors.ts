/** The SDK's errors, shaped as the official `openai` SDK's (`status`, `code`, `type`, `param`). */

/** The gateway answered with an error (`{"error":{message,type,param,code}}`). */
export class GearboxError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly type: string | null = null,
    readonly param: string | null = null,
  ) {
    super(`${status} ${message}`);
    this.name = "GearboxError";
  }

  /** The error of an HTTP answer's body (OpenAI-shaped, or whatever text it had). */
  static fromBody(status: number, text: string): GearboxError {
    try {
      const body = JSON.parse(text) as { error?: { message?: string; code?: string | null; type?: string | null; param?: string | null } };
      const e = body.error;
      if (e?.message) return new GearboxError(status, e.message, e.code ?? null, e.type ?? null, e.param ?? null);
    } catch {
      // not JSON: the text itself
    }
    return new GearboxError(status, text.slice(0, 500) || `HTTP ${status}`);
  }

  /** 4xx but 404 (a lost session), 408 and 429: retrying the same thing will not help. */
  get permanent(): boolean {
    return this.status >= 400 && this.status < 500 && ![404, 408, 429].includes(this.status);
  }
}

/** The gateway could not be reached (connection refused, reset, timed out). */
export class GatewayUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GatewayUnreachableError";
  }
}
