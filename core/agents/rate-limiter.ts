/** Per-minute call budgets of agent tools, keyed by `${projectId}:${agentId}:${toolId}`. */
export interface ToolRateLimiter {
  /** True when a call may go ahead now (and counts it); false when the key's budget for the minute is spent. */
  take(key: string, perMinute: number): Promise<boolean>;
  close(): Promise<void>;
}
