/**
 * Where Envoy dials this agent, as registered with the control plane: `ip:port`, IPv6 in
 * brackets (`[2001:db8::7]:8088`, the form Envoy's address parser and ORIGINAL_DST take). A bare
 * IP (Kubernetes' `$(HOST_IP)`, which cannot add brackets itself) gets the agent's port in the
 * right form; anything else is taken as given and checked by the caller.
 */
import { isIP } from "node:net";

export function advertiseAddressOf(given: string, port: number): string {
  const ip = given.trim();
  switch (isIP(ip)) {
    case 4:
      return `${ip}:${port}`;
    case 6:
      return `[${ip}]:${port}`;
    default:
      return given;
  }
}
