import { auditLogCases } from "./audit-log.cases.ts";
import { MemoryAuditLog } from "./memory-audit-log.ts";

auditLogCases("memory", () => Promise.resolve({ log: new MemoryAuditLog(), close: () => Promise.resolve() }));
