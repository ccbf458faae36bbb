import { MemoryTenantStore } from "./memory-tenant-store.ts";
import { tenantStoreCases } from "./tenant-store.cases.ts";

tenantStoreCases("memory", () => {
  const store = new MemoryTenantStore();
  // Everything a memory store holds is what its listings return.
  const dump = async () => JSON.stringify([await store.listTenants(), await store.listKeys()]);
  return Promise.resolve({ store, dump, close: () => Promise.resolve() });
});
